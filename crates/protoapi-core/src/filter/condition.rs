//! A checked filter, as storage receives it: comparisons of the storage
//! columns' values ([`SortValue`]s) joined by AND, OR and NOT. A list's or a
//! map's column holds its values as JSON ([`json_values`], [`json_entries`]),
//! which a comparison looks into as [`Within`] says.

use std::fmt;

use crate::resource::SortValue;

/// A checked AIP-160 filter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Condition {
    /// Every condition holds.
    All(Vec<Condition>),
    /// At least one condition holds.
    Any(Vec<Condition>),
    Not(Box<Condition>),
    Compare(Comparison),
}

/// One field's value against a literal of its column's type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Comparison {
    /// The field's JSON path, which names its storage column.
    pub field: &'static str,
    /// Which values of the column are compared.
    pub within: Within,
    pub op: Op,
    /// Integers, booleans (0 or 1), enum numbers, timestamps (microseconds,
    /// 0 when unset) and durations (nanoseconds, 0 when unset) as
    /// [`SortValue::Int`], text as [`SortValue::Text`]; ignored by
    /// [`Op::Present`].
    pub value: SortValue,
}

/// Which values of a column a comparison looks at.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Within {
    /// The column's value (a single field).
    #[default]
    Value,
    /// Any element of a list (`tags:"red"`): the comparison holds when it
    /// holds for one of them.
    Element,
    /// Any key of a map (`labels:env`).
    Key,
    /// The value of a map's entry with this key (`labels.env = "prod"`):
    /// false when the map has no such key.
    Entry(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
    /// The text matches the value as a pattern in which every `*` stands
    /// for any run of characters, the empty one included; nothing else is
    /// special, and case matters.
    Matches,
    /// There is something to compare: a list's element, a map's key or the
    /// entry [`Within::Entry`] names (`tags:*`, `labels.env:*`).
    Present,
}

impl Condition {
    /// Whether an item whose fields have the values `value` answers (by
    /// JSON name) meets the condition.
    pub fn admits(&self, value: &dyn Fn(&str) -> SortValue) -> bool {
        match self {
            Condition::All(all) => all.iter().all(|c| c.admits(value)),
            Condition::Any(any) => any.iter().any(|c| c.admits(value)),
            Condition::Not(inner) => !inner.admits(value),
            Condition::Compare(comparison) => comparison.admits(&value(comparison.field)),
        }
    }
}

impl Comparison {
    /// Whether a column's value meets this comparison: a single field's
    /// value, or the JSON of a list's elements or a map's entries.
    pub fn admits(&self, value: &SortValue) -> bool {
        use serde_json::Value as Json;
        let json: Json = match (&self.within, value) {
            (Within::Value, _) => return self.compares(value),
            (_, SortValue::Text(text)) => serde_json::from_str(text).unwrap_or_default(),
            (_, SortValue::Int(_)) => return false,
        };
        match (&self.within, json) {
            (Within::Element, Json::Array(elements)) => {
                elements.iter().any(|e| self.compares(&sort_value(e)))
            }
            (Within::Key, Json::Object(entries)) => entries
                .keys()
                .any(|key| self.compares(&SortValue::Text(key.clone()))),
            (Within::Entry(key), Json::Object(entries)) => entries
                .get(key)
                .is_some_and(|v| self.compares(&sort_value(v))),
            _ => false,
        }
    }

    /// Whether one value meets the comparison's operator and literal.
    fn compares(&self, value: &SortValue) -> bool {
        let wanted = &self.value;
        match self.op {
            Op::Equal => value == wanted,
            Op::NotEqual => value != wanted,
            Op::Less => value < wanted,
            Op::LessOrEqual => value <= wanted,
            Op::Greater => value > wanted,
            Op::GreaterOrEqual => value >= wanted,
            Op::Matches => match (value, wanted) {
                (SortValue::Text(text), SortValue::Text(pattern)) => wildcard(pattern, text),
                _ => false,
            },
            Op::Present => true,
        }
    }
}

/// A JSON element or entry value as the column's value it was written from.
fn sort_value(value: &serde_json::Value) -> SortValue {
    match value {
        serde_json::Value::String(text) => SortValue::Text(text.clone()),
        other => SortValue::Int(other.as_i64().unwrap_or_default()),
    }
}

fn json_value(value: SortValue) -> serde_json::Value {
    match value {
        SortValue::Int(number) => number.into(),
        SortValue::Text(text) => text.into(),
    }
}

/// The column value of a list field: its elements' values as a JSON array.
pub fn json_values(values: impl IntoIterator<Item = SortValue>) -> String {
    serde_json::Value::Array(values.into_iter().map(json_value).collect()).to_string()
}

/// The column value of a map field with string keys: its entries as a JSON
/// object, keys in order.
pub fn json_entries<'a>(entries: impl IntoIterator<Item = (&'a str, SortValue)>) -> String {
    let entries: std::collections::BTreeMap<&str, serde_json::Value> = entries
        .into_iter()
        .map(|(key, value)| (key, json_value(value)))
        .collect();
    serde_json::to_string(&entries).unwrap_or_default()
}

/// Whether `text` matches `pattern`, in which every `*` stands for any run
/// of characters. Linear in both: the parts between stars are found
/// leftmost first, which decides such patterns exactly.
pub fn wildcard(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(start) => rest = &rest[start + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// The canonical text of a condition: what page tokens bind, and what logs
/// may show.
impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |f: &mut fmt::Formatter<'_>, all: &[Condition], word: &str| {
            f.write_str("(")?;
            for (index, condition) in all.iter().enumerate() {
                if index > 0 {
                    write!(f, " {word} ")?;
                }
                write!(f, "{condition}")?;
            }
            f.write_str(")")
        };
        match self {
            Condition::All(all) => join(f, all, "AND"),
            Condition::Any(any) => join(f, any, "OR"),
            Condition::Not(inner) => write!(f, "NOT {inner}"),
            Condition::Compare(Comparison {
                field,
                within,
                op,
                value,
            }) => {
                match within {
                    Within::Value => write!(f, "{field} ")?,
                    Within::Element => write!(f, "{field}[*] ")?,
                    Within::Key => write!(f, "{field}{{*}} ")?,
                    Within::Entry(key) => write!(f, "{field}[{key:?}] ")?,
                }
                let op = match op {
                    Op::Equal => "=",
                    Op::NotEqual => "!=",
                    Op::Less => "<",
                    Op::LessOrEqual => "<=",
                    Op::Greater => ">",
                    Op::GreaterOrEqual => ">=",
                    Op::Matches => "~",
                    Op::Present => return f.write_str("exists"),
                };
                match value {
                    SortValue::Int(number) => write!(f, "{op} {number}"),
                    SortValue::Text(text) => write!(f, "{op} {text:?}"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_runs_of_characters_and_nothing_else() {
        for (pattern, text, expected) in [
            ("abc", "abc", true),
            ("abc", "abcd", false),
            ("a*", "a", true),
            ("a*", "ab/c", true),
            ("*c", "abc", true),
            ("*c", "cb", false),
            ("*b*", "abc", true),
            ("a*b*b", "abb", true),
            ("a*b*b", "ab", false),
            ("a*c", "ac", true),
            ("a*c", "acb", false),
            ("**", "", true),
            ("a?c", "abc", false),
            ("a_c", "abc", false),
            ("a%", "abc", false),
            ("A*", "abc", false),
            ("é*", "éa", true),
        ] {
            assert_eq!(wildcard(pattern, text), expected, "{pattern} ~ {text}");
        }
    }

    #[test]
    fn conditions_combine_and_print_canonically() {
        let size = |op, value| {
            Condition::Compare(Comparison {
                field: "size",
                within: Within::Value,
                op,
                value: SortValue::Int(value),
            })
        };
        let condition = Condition::All(vec![
            size(Op::Greater, 2),
            Condition::Not(Box::new(Condition::Any(vec![
                size(Op::Equal, 5),
                Condition::Compare(Comparison {
                    field: "name",
                    within: Within::Value,
                    op: Op::Matches,
                    value: SortValue::Text("a*\"".into()),
                }),
            ]))),
        ]);
        let item = |size: i64, name: &str| {
            let name = name.to_owned();
            move |field: &str| match field {
                "size" => SortValue::Int(size),
                _ => SortValue::Text(name.clone()),
            }
        };
        assert!(condition.admits(&item(3, "b")));
        assert!(!condition.admits(&item(5, "b")));
        assert!(!condition.admits(&item(3, "ax\"")));
        assert!(!condition.admits(&item(2, "b")));
        assert_eq!(
            condition.to_string(),
            r#"(size > 2 AND NOT (size = 5 OR name ~ "a*\""))"#
        );
    }
}
