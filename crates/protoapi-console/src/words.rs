//! What pages call things: labels made from the contract's names
//! (`shelfLimits.books` → `Shelf limits › books`,
//! `bookCopies` → `Book copies`), and the proto comments of fields as
//! their help.

use prost_reflect::{FieldDescriptor, Kind};
use protoapi_client::schema::{Collection, Schema};
use serde_json::Value;

/// What pages call `collection`: the display name its annotations give
/// it, else its id in words (`shelfItems` → `Shelf items`).
pub fn collection(collection: &Collection) -> String {
    collection
        .display_name
        .map_or_else(|| label(collection.id), str::to_owned)
}

/// What pages call the field at `path` of `collection`: the display name
/// its annotations give it, else the path in words, with the display name
/// of its first segment where that has one (`Sign-in claim › issuer`).
pub fn field(collection: &Collection, path: &str) -> String {
    if let Some(name) = collection.field_name(path) {
        return name.to_owned();
    }
    match path.split_once('.') {
        Some((first, rest)) => match collection.field_name(first) {
            Some(name) => format!("{name} › {}", label(rest).to_lowercase()),
            None => label(path),
        },
        None => label(path),
    }
}

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

/// A `google.protobuf.Timestamp` held by the field at `path` of
/// `collection`, as pages show it: its date and time in UTC to the second
/// (`2026-01-31 12:00:05 UTC`); `None` for a value of any other field.
pub fn moment_of(
    schema: &Schema,
    collection: &Collection,
    path: &str,
    value: &Value,
) -> Option<String> {
    match value {
        Value::String(text) if is_timestamp(schema, collection, path) => moment(text),
        _ => None,
    }
}

fn is_timestamp(schema: &Schema, collection: &Collection, path: &str) -> bool {
    let pool = (schema.descriptors)();
    let Some(mut message) = pool.get_message_by_name(collection.message) else {
        return false;
    };
    let mut segments = path.split('.').peekable();
    while let Some(segment) = segments.next() {
        let Some(field) = message.get_field_by_json_name(segment) else {
            return false;
        };
        match field.kind() {
            Kind::Message(inner) if segments.peek().is_none() => {
                return !field.is_list() && inner.full_name() == "google.protobuf.Timestamp";
            }
            Kind::Message(inner) if !field.is_list() && !field.is_map() => message = inner,
            _ => return false,
        }
    }
    false
}

/// An RFC 3339 time in UTC (`2026-01-31T12:00:05.123Z`) as
/// `2026-01-31 12:00:05 UTC`; `None` for any other text.
fn moment(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let shaped = bytes.len() >= 20
        && text.ends_with('Z')
        && bytes[..19].iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            10 => *b == b'T',
            13 | 16 => *b == b':',
            _ => b.is_ascii_digit(),
        });
    shaped.then(|| format!("{} {} UTC", &text[..10], &text[11..19]))
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
    use super::{label, moment};

    #[test]
    fn times_read_in_utc_to_the_second() {
        assert_eq!(
            moment("2026-01-31T12:00:05.123456Z").as_deref(),
            Some("2026-01-31 12:00:05 UTC")
        );
        assert_eq!(
            moment("2026-01-31T12:00:05Z").as_deref(),
            Some("2026-01-31 12:00:05 UTC")
        );
        for other in [
            "",
            "2026-01-31",
            "2026-01-31T12:00:05+01:00",
            "2026-01-31 12:00:05Z",
            "２026-01-31T12:00:05Z",
        ] {
            assert_eq!(moment(other), None, "{other}");
        }
    }

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
