//! What pages call things: labels made from the contract's names
//! (`shelfLimits.books` → `Shelf limits › books`,
//! `bookCopies` → `Book copies`), and the proto comments of fields as
//! their help.

use prost_reflect::FieldDescriptor;

/// A field path or collection id in words: each camelCase or snake_case
/// segment split into lowercase words, the first capitalised, segments
/// joined by `›`.
pub fn label(path: &str) -> String {
    let segments: Vec<String> = path.split('.').map(words).collect();
    let mut label = segments.join(" › ");
    if let Some(first) = label.chars().next() {
        let upper: String = first.to_uppercase().collect();
        label.replace_range(..first.len_utf8(), &upper);
    }
    label
}

/// `shelfLimits` or `shelf_limits` → `shelf limits`; an acronym
/// stays one word (`isbnId` → `isbn id`, `URLs` → `urls`).
fn words(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len() + 4);
    let mut previous_lower = false;
    for c in segment.chars() {
        if c == '_' || c == '-' {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            out.push(' ');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_lowercase());
    }
    out
}

/// The comment written above `field` in its proto (leading, or else
/// trailing), whitespace of each line trimmed; empty when none was kept.
pub fn comment(field: &FieldDescriptor) -> String {
    let file = field.parent_file();
    let proto = file.file_descriptor_proto();
    let Some(info) = &proto.source_code_info else {
        return String::new();
    };
    let path = field.path();
    let Some(location) = info.location.iter().find(|l| l.path == path) else {
        return String::new();
    };
    let text = location
        .leading_comments
        .as_deref()
        .or(location.trailing_comments.as_deref())
        .unwrap_or_default();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" ")
}

#[cfg(test)]
mod tests {
    use super::label;

    #[test]
    fn names_read_as_words() {
        for (name, words) in [
            ("name", "Name"),
            ("bookCopies", "Book copies"),
            ("shelfLimits.books", "Shelf limits › books"),
            ("cover_art.artist", "Cover art › artist"),
            ("isbnId", "Isbn id"),
            ("etag", "Etag"),
            ("createTime", "Create time"),
        ] {
            assert_eq!(label(name), words);
        }
    }
}
