//! Field names and paths as canonical JSON spells them, and what escaping
//! costs.

use prost_reflect::MessageDescriptor;

/// Spells field names and mask paths in lowerCamelCase, the form canonical
/// JSON uses: `resource_limits.clusters,name` → `resourceLimits.clusters,name`.
pub fn lower_camel_case(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    push_lower_camel_case(path, &mut out);
    out
}

/// Appends `path` in lowerCamelCase; `false` when the result would not read
/// back as `path` (an upper-case letter, `_` before a non-letter, `__`), which
/// a field mask then cannot be written as.
pub(super) fn push_lower_camel_case(path: &str, out: &mut String) -> bool {
    let mut reads_back = true;
    let mut upper = false;
    for ch in path.chars() {
        reads_back &= !ch.is_ascii_uppercase();
        if ch == '_' {
            reads_back &= !upper;
            upper = true;
        } else if upper {
            let capital = ch.to_ascii_uppercase();
            reads_back &= capital != ch;
            out.push(capital);
            upper = false;
        } else {
            out.push(ch);
        }
    }
    reads_back
}

/// How many bytes JSON adds to a string by escaping it: one for `"`, `\\`
/// and the short escapes (`\n`, `\t`, ...), five for other control
/// characters (`\u0001`).
pub fn escape_overhead(text: &str) -> usize {
    // Branch-free so that it vectorises: list pages scan large texts.
    text.bytes()
        .map(|byte| {
            let quoted = usize::from(byte == b'"' || byte == b'\\');
            let control = usize::from(byte < 0x20);
            let short = usize::from(matches!(byte, b'\n' | b'\r' | b'\t' | 0x08 | 0x0c));
            quoted + 5 * control - 4 * short
        })
        .sum()
}

/// A field by its JSON name or its proto name.
pub fn find_field(
    descriptor: &MessageDescriptor,
    name: &str,
) -> Option<prost_reflect::FieldDescriptor> {
    descriptor
        .get_field_by_json_name(name)
        .or_else(|| descriptor.get_field_by_name(name))
}

/// The path of `field` inside the request field `prefix` (`group.name`), or
/// `field` itself when the request is the resource (`prefix` empty).
pub fn field_path(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_owned()
    } else {
        format!("{prefix}.{field}")
    }
}

#[cfg(test)]
mod escape_tests {
    #[test]
    fn overhead_matches_serde_json() {
        for text in [
            "plain",
            "quote \" and \\ slash",
            "line\nbreak\ttab",
            "\u{1}\u{7f}\u{0}é",
        ] {
            let json = serde_json::to_string(text).unwrap();
            assert_eq!(
                json.len(),
                text.len() + 2 + super::escape_overhead(text),
                "{text:?}"
            );
        }
    }
}
