//! Server text made safe for a terminal. Descriptions, readmes, names and
//! error messages come from the server, and any tenant can write them: a
//! control character or a bidirectional override in them could move the
//! cursor, retitle or clear the terminal, or make text read other than it
//! is. Everything the binaries print that did not come from the user goes
//! through [`escape`] (text) or [`escape_json`] (JSON output).

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` must not reach a terminal as is: C0 controls (ESC among
/// them), DEL, C1 controls, the Unicode bidirectional marks, embeddings,
/// overrides and isolates, and the line and paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\0'..='\x1f'
        | '\x7f'..='\u{9f}'
        | '\u{061c}'
        | '\u{200e}' | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// `text` with every [unsafe](is_unsafe) character shown as its escape:
/// `\n`, `\r`, `\t`, else `\u{1b}` (Rust's spelling). Anything else is kept.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Serialized JSON with the [unsafe](is_unsafe) characters `serde_json`
/// leaves as they are (DEL, C1, bidirectional controls, separators) written
/// as `\uXXXX` escapes: the same JSON value, safe on a terminal. Outside
/// strings JSON text is ASCII without controls other than whitespace, so
/// every such character is inside a string, where the escape means it.
pub fn escape_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c > '\x1f' && is_unsafe(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_overrides_are_shown_escaped() {
        assert_eq!(escape("plain tëxt"), Cow::Borrowed("plain tëxt"));
        assert_eq!(
            escape("\x1b]0;pwned\x07\x1b[2J"),
            "\\u{1b}]0;pwned\\u{7}\\u{1b}[2J"
        );
        assert_eq!(escape("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert_eq!(escape("\x7f\u{9b}31m"), "\\u{7f}\\u{9b}31m");
        assert_eq!(escape("\u{202e}cod.exe"), "\\u{202e}cod.exe");
        assert_eq!(escape("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
    }

    #[test]
    fn json_stays_the_same_value() {
        let value = serde_json::json!({"d": "\x1b[2J \u{9b}1m \u{202e}x \u{2028} \x7f ok é"});
        let text = escape_json(&serde_json::to_string_pretty(&value).unwrap());
        assert!(!text.chars().any(|c| is_unsafe(c) && c != '\n'), "{text}");
        assert!(text.contains("\\u001b[2J"), "{text}");
        assert!(text.contains("\\u009b1m"), "{text}");
        assert!(text.contains("\\u202ex"), "{text}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
    }
}
