//! A parsed filter checked against a resource's filterable fields: each
//! field found by its JSON or proto name, each value read as its field's
//! type, each problem answered with where it was written.

use prost_reflect::{EnumDescriptor, FieldDescriptor, Kind};

use super::syntax::{self, Arg, Comparator, Expr, Member, Restriction};
use super::{Comparison, Condition, FilterError, Op};
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

/// The type a filterable field's column holds.
enum Type {
    Text,
    Int,
    Bool,
    Enum(EnumDescriptor),
    Timestamp,
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

    /// The filterable field `member` names, with its JSON name and type.
    fn field(&self, member: &Member) -> Result<(&'static str, Type), FilterError> {
        let path = member.joined();
        let quoted = member.parts.iter().any(|part| part.quoted);
        let found = self.filterable.iter().find_map(|json| {
            let field = self.descriptor.get_field_by_json_name(json)?;
            (!quoted && (*json == path || field.name() == path)).then_some((*json, field))
        });
        let Some((json, field)) = found else {
            return Err(FilterError::new(
                member.at,
                format!(
                    "`{path}` is not a field {} lists can be filtered by{}",
                    self.kind,
                    self.filterable_hint()
                ),
            ));
        };
        match type_of(&field) {
            Some(ty) => Ok((json, ty)),
            None => Err(FilterError::new(
                member.at,
                format!("`{path}` holds values filters cannot compare"),
            )),
        }
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
        let (field, ty) = self.field(member)?;
        let value = match arg {
            Arg::Value(value) => value,
            Arg::Composite(at) => {
                return Err(FilterError::new(
                    *at,
                    "compare with one value, not a parenthesized expression",
                ));
            }
        };
        let compare = |op, value| Condition::Compare(Comparison { field, op, value });
        // `field:*`: the field is set (not its default).
        if *comparator == Comparator::Has && value.is_word("*") {
            let unset = match ty {
                Type::Text => SortValue::Text(String::new()),
                _ => SortValue::Int(0),
            };
            return Ok(compare(Op::NotEqual, unset));
        }
        let op = match comparator {
            // On a single field, `:` is `=`.
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
            _ if null => match (ty, op) {
                (Type::Timestamp, Op::Equal | Op::NotEqual) => SortValue::Int(0),
                (Type::Timestamp, _) => {
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

/// The type of a field's storage column, for a single field filters can
/// compare.
fn type_of(field: &FieldDescriptor) -> Option<Type> {
    if field.is_list() || field.is_map() {
        return None;
    }
    Some(match field.kind() {
        Kind::String => Type::Text,
        Kind::Bool => Type::Bool,
        Kind::Enum(values) => Type::Enum(values),
        Kind::Message(message) if message.full_name() == "google.protobuf.Timestamp" => {
            Type::Timestamp
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
