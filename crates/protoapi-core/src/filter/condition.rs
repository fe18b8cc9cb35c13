//! A checked filter, as storage receives it: comparisons of the storage
//! columns' values ([`SortValue`]s) joined by AND, OR and NOT.

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
    /// The field's JSON name, which names its storage column.
    pub field: &'static str,
    pub op: Op,
    /// Integers, booleans (0 or 1), enum numbers and timestamps
    /// (microseconds, 0 when unset) as [`SortValue::Int`], text as
    /// [`SortValue::Text`].
    pub value: SortValue,
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
    /// Whether a field's value meets this comparison.
    pub fn admits(&self, value: &SortValue) -> bool {
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
        }
    }
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
            Condition::Compare(Comparison { field, op, value }) => {
                let op = match op {
                    Op::Equal => "=",
                    Op::NotEqual => "!=",
                    Op::Less => "<",
                    Op::LessOrEqual => "<=",
                    Op::Greater => ">",
                    Op::GreaterOrEqual => ">=",
                    Op::Matches => "~",
                };
                match value {
                    SortValue::Int(number) => write!(f, "{field} {op} {number}"),
                    SortValue::Text(text) => write!(f, "{field} {op} {text:?}"),
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
