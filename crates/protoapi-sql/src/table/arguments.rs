//! A statement's arguments, bound through the pool (sqlx) or on the
//! calling thread (rusqlite, [`crate::direct`]).

use protoapi_core::resource::SortValue;
use rusqlite::ToSql;
use rusqlite::types::{ToSqlOutput, ValueRef};
use sqlx::Arguments as _;
use sqlx::any::AnyArguments;

/// The values of `$1`, `$2`, … in order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Arguments(Vec<SortValue>);

impl Arguments {
    /// Adds `value` and answers its placeholder.
    pub(crate) fn bind(&mut self, value: SortValue) -> String {
        self.0.push(value);
        format!("${}", self.0.len())
    }

    pub(crate) fn text(&mut self, value: impl Into<String>) -> String {
        self.bind(SortValue::Text(value.into()))
    }

    pub(crate) fn int(&mut self, value: i64) -> String {
        self.bind(SortValue::Int(value))
    }

    /// The arguments for the pool.
    pub(crate) fn any(self) -> AnyArguments {
        let mut arguments = AnyArguments::default();
        for value in self.0 {
            let added = match value {
                SortValue::Int(value) => arguments.add(value),
                SortValue::Text(value) => arguments.add(value),
            };
            added.expect("encoding a plain value cannot fail");
        }
        arguments
    }

    /// The arguments for a direct read.
    pub(crate) fn direct(&self) -> impl rusqlite::Params + '_ {
        rusqlite::params_from_iter(self.0.iter().map(Param))
    }
}

/// One argument of a direct read, borrowed.
struct Param<'a>(&'a SortValue);

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            SortValue::Int(value) => ValueRef::Integer(*value),
            SortValue::Text(value) => ValueRef::Text(value.as_bytes()),
        }))
    }
}
