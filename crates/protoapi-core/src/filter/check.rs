//! A parsed filter checked against a resource's filterable fields: each
//! field found by its JSON or proto name, each value read as its field's
//! type, each problem answered with where it was written.

use prost_reflect::{EnumDescriptor, Kind};

use super::syntax::{self, Arg, Comparator, Expr, Member, Restriction};
use super::{Comparison, Condition, FilterError, Op, Within};
use crate::error::Error;
use crate::resource::{Resource, SortValue};

/// The condition of `filter` on items of `R`, `None` for an empty filter;
/// INVALID_ARGUMENT naming `filter` and the position of what is wrong.
pub fn check<R: Resource>(filter: &str) -> Result<Option<Condition>, Error> {
    let fields = Fields {
        descriptor: R::default().descriptor(),
        filterable: R::FILTERABLE,
        kind: R::TYPE,
    };
    fields.check(filter)
}

/// As [`check`], on messages of `descriptor` (whose lists are of `kind`)
/// filterable by the fields of JSON names `filterable`.
pub fn check_message(
    descriptor: prost_reflect::MessageDescriptor,
    filterable: &'static [&'static str],
    kind: &'static str,
    filter: &str,
) -> Result<Option<Condition>, Error> {
    let fields = Fields {
        descriptor,
        filterable,
        kind,
    };
    fields.check(filter)
}

/// The type of the values a filterable field's column holds.
enum Type {
    Text,
    Int,
    Bool,
    Enum(EnumDescriptor),
    Timestamp,
    /// Nanoseconds.
    Duration,
}

/// What a filter names.
enum Target {
    Single(Type),
    /// A list: filters ask whether it holds a value.
    List(Type),
    /// A map with string keys: filters ask whether it has a key, or compare
    /// the value of the entry with `key`.
    Map {
        key: Option<String>,
        values: Type,
    },
}

/// What a filter may name: fields of `descriptor` among `filterable`.
struct Fields {
    descriptor: prost_reflect::MessageDescriptor,
    filterable: &'static [&'static str],
    /// What the lists filtered hold, for messages (`library.example.com/Book`).
    kind: &'static str,
}

impl Fields {
    fn check(&self, filter: &str) -> Result<Option<Condition>, Error> {
        if filter.trim().is_empty() {
            return Ok(None);
        }
        syntax::parse(filter)
            .and_then(|expr| self.condition(&expr))
            .map(Some)
            .map_err(|error| Error::invalid_fields(vec![error.violation(filter)]))
    }

    fn condition(&self, expr: &Expr) -> Result<Condition, FilterError> {
        let each = |all: &[Expr]| {
            all.iter()
                .map(|e| self.condition(e))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(match expr {
            Expr::And(all) => Condition::All(each(all)?),
            Expr::Or(any) => Condition::Any(each(any)?),
            Expr::Not(inner) => Condition::Not(Box::new(self.condition(inner)?)),
            Expr::Restriction(restriction) => self.restriction(restriction)?,
            Expr::Global(member) => {
                return Err(FilterError::new(
                    member.at,
                    format!(
                        "`{}` compares no field: write `field = value`{}",
                        member.joined(),
                        self.filterable_hint()
                    ),
                ));
            }
        })
    }

    /// The filterable field `member` names (its JSON path, proto names
    /// accepted) and what it holds: one value, a list, or a map, then the
    /// key of one of its entries when a part follows.
    fn field(&self, member: &Member) -> Result<(&'static str, Target), FilterError> {
        let written = member.joined();
        let unknown = || {
            FilterError::new(
                member.at,
                format!(
                    "`{written}` is not a field {} lists can be filtered by{}",
                    self.kind,
                    self.filterable_hint()
                ),
            )
        };
        let mut message = self.descriptor.clone();
        let mut path = Vec::new();
        let mut parts = member.parts.iter().peekable();
        let leaf = loop {
            let part = parts.next().ok_or_else(unknown)?;
            let field = (!part.quoted)
                .then(|| {
                    (message.get_field_by_json_name(&part.text))
                        .or_else(|| message.get_field_by_name(&part.text))
                })
                .flatten()
                .ok_or_else(unknown)?;
            path.push(field.json_name().to_owned());
            match field.kind() {
                Kind::Message(inner)
                    if parts.peek().is_some() && !field.is_list() && !field.is_map() =>
                {
                    message = inner;
                }
                _ => break field,
            }
        };
        let path = path.join(".");
        let field = *self
            .filterable
            .iter()
            .find(|f| **f == path)
            .ok_or_else(unknown)?;
        let rest: Vec<_> = parts.collect();
        let cannot = || {
            FilterError::new(
                member.at,
                format!("`{path}` holds values filters cannot compare"),
            )
        };
        let target = match leaf.kind() {
            Kind::Message(entry) if leaf.is_map() => {
                let values = type_of(&entry.map_entry_value_field().kind()).ok_or_else(cannot)?;
                let key = match rest.as_slice() {
                    [] => None,
                    [key] => Some(key.text.clone()),
                    _ => {
                        return Err(FilterError::new(
                            member.at,
                            format!(
                                "`{path}` is a map: one key follows it (`{path}.key`, or `{path}.\"a.b\"` for a key holding dots)"
                            ),
                        ));
                    }
                };
                Target::Map { key, values }
            }
            _ if !rest.is_empty() => {
                return Err(FilterError::new(
                    member.at,
                    format!("`{path}` has no fields: `{written}` names nothing"),
                ));
            }
            kind if leaf.is_list() => Target::List(type_of(&kind).ok_or_else(cannot)?),
            kind => Target::Single(type_of(&kind).ok_or_else(cannot)?),
        };
        Ok((field, target))
    }

    fn filterable_hint(&self) -> String {
        match self.filterable {
            [] => format!("; {} lists take no filter", self.kind),
            fields => format!("; filterable: {}", fields.join(", ")),
        }
    }

    fn restriction(&self, restriction: &Restriction) -> Result<Condition, FilterError> {
        let Restriction {
            member,
            comparator,
            arg,
        } = restriction;
        let (field, target) = self.field(member)?;
        let value = match arg {
            Arg::Value(value) => value,
            Arg::Composite(at) => {
                return Err(FilterError::new(
                    *at,
                    "compare with one value, not a parenthesized expression",
                ));
            }
        };
        let only_has = |what: &str| {
            if *comparator == Comparator::Has {
                return Ok(());
            }
            Err(FilterError::new(
                member.at,
                format!("`{field}` is {what}; other comparisons do not apply to it"),
            ))
        };
        let (within, ty) = match target {
            Target::Single(ty) => (Within::Value, ty),
            Target::List(ty) => {
                only_has(&format!(
                    "a list: `{field}:value` asks whether it holds a value"
                ))?;
                (Within::Element, ty)
            }
            Target::Map { key: None, .. } => {
                only_has(&format!(
                    "a map: `{field}:key` asks whether it has a key, `{field}.key = value` compares an entry's value"
                ))?;
                (Within::Key, Type::Text)
            }
            Target::Map {
                key: Some(key),
                values,
            } => (Within::Entry(key), values),
        };
        Comparing { field, within, ty }.condition(*comparator, value)
    }
}

/// One comparison being checked: the field's column, which of its values,
/// and their type.
struct Comparing {
    field: &'static str,
    within: Within,
    ty: Type,
}

impl Comparing {
    fn condition(self, comparator: Comparator, value: &Member) -> Result<Condition, FilterError> {
        let Comparing { field, within, ty } = self;
        let compare = |op, value| {
            Condition::Compare(Comparison {
                field,
                within: within.clone(),
                op,
                value,
            })
        };
        // `field:*`: the field is set (not its default); a list has an
        // element, a map a key, an entry is there.
        if comparator == Comparator::Has && value.is_word("*") {
            return Ok(match (&within, ty) {
                (Within::Value, Type::Text) => {
                    compare(Op::NotEqual, SortValue::Text(String::new()))
                }
                (Within::Value, _) => compare(Op::NotEqual, SortValue::Int(0)),
                _ => compare(Op::Present, SortValue::Int(0)),
            });
        }
        let op = match comparator {
            // On a single value, `:` is `=`.
            Comparator::Equal | Comparator::Has => Op::Equal,
            Comparator::NotEqual => Op::NotEqual,
            Comparator::Less => Op::Less,
            Comparator::LessOrEqual => Op::LessOrEqual,
            Comparator::Greater => Op::Greater,
            Comparator::GreaterOrEqual => Op::GreaterOrEqual,
        };
        let literal = value.joined();
        let null = !value.parts[0].quoted && matches!(literal.as_str(), "NULL" | "null");
        let invalid = |wants: &str| {
            FilterError::new(
                value.at,
                format!("`{field}` {wants}; `{literal}` is not one"),
            )
        };
        let value = match ty {
            _ if null => match (&within, ty, op) {
                (Within::Value, Type::Timestamp | Type::Duration, Op::Equal | Op::NotEqual) => {
                    SortValue::Int(0)
                }
                (Within::Value, Type::Timestamp | Type::Duration, _) => {
                    return Err(FilterError::new(
                        value.at,
                        "NULL compares only with `=` and `!=`",
                    ));
                }
                _ => {
                    return Err(FilterError::new(
                        value.at,
                        format!("`{field}` always has a value: it is never NULL"),
                    ));
                }
            },
            Type::Text if literal.contains('*') && matches!(op, Op::Equal | Op::NotEqual) => {
                let matches = compare(Op::Matches, SortValue::Text(literal));
                return Ok(match op {
                    Op::NotEqual => Condition::Not(Box::new(matches)),
                    _ => matches,
                });
            }
            Type::Text => SortValue::Text(literal),
            Type::Int => SortValue::Int(
                literal
                    .parse()
                    .map_err(|_| invalid("is a 64-bit integer"))?,
            ),
            Type::Bool => SortValue::Int(match literal.to_ascii_lowercase().as_str() {
                "true" => 1,
                "false" => 0,
                _ => return Err(invalid("is `true` or `false`")),
            }),
            Type::Enum(values) => {
                SortValue::Int(enum_number(&values, &literal).ok_or_else(|| {
                    let names: Vec<String> = values
                        .values()
                        .map(|v| v.name().to_owned())
                        .take(12)
                        .collect();
                    invalid(&format!("is one of {}", names.join(", ")))
                })?)
            }
            Type::Timestamp => SortValue::Int(
                literal
                    .parse::<prost_types::Timestamp>()
                    .map(|time| crate::time::to_micros(&time))
                    .map_err(|_| {
                        invalid("is an RFC 3339 time in quotes (\"2026-01-02T03:04:05Z\")")
                    })?,
            ),
            Type::Duration => SortValue::Int(
                literal
                    .parse::<prost_types::Duration>()
                    .map(|duration| crate::time::duration_nanos(&duration))
                    .map_err(|_| invalid("is a duration in seconds (`90s`, `1.5s`)"))?,
            ),
        };
        Ok(compare(op, value))
    }
}

/// The number of an enum value named or numbered by `literal`.
fn enum_number(values: &EnumDescriptor, literal: &str) -> Option<i64> {
    match values.get_value_by_name(literal) {
        Some(value) => Some(i64::from(value.number())),
        None => literal.parse::<i32>().ok().map(i64::from),
    }
}

/// The type of the values of a field (or of a list's elements, a map's
/// values) of `kind`, when filters can compare them.
fn type_of(kind: &Kind) -> Option<Type> {
    Some(match kind.clone() {
        Kind::String => Type::Text,
        Kind::Bool => Type::Bool,
        Kind::Enum(values) => Type::Enum(values),
        Kind::Message(message) if message.full_name() == "google.protobuf.Timestamp" => {
            Type::Timestamp
        }
        Kind::Message(message) if message.full_name() == "google.protobuf.Duration" => {
            Type::Duration
        }
        Kind::Int32
        | Kind::Int64
        | Kind::Sint32
        | Kind::Sint64
        | Kind::Sfixed32
        | Kind::Sfixed64
        | Kind::Uint32
        | Kind::Fixed32
        | Kind::Uint64
        | Kind::Fixed64 => Type::Int,
        _ => return None,
    })
}
