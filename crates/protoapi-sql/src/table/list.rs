//! Lists: a page of items in keyset order under a table's filters, and
//! their total count (from the counters where a hierarchy filter allows).

use futures_util::TryStreamExt;

use super::scan_budget::{on_pool, read_direct};
use super::{Arguments, Table, Tables, backend_error, decode_body};
use crate::dialect::Dialect;
use protoapi_core::resource::{Public, Resource};
use protoapi_core::store::{Hierarchy, ListQuery, Matching, Page, PublicItems, StoreError};
use protoapi_core::uidp;

impl Table {
    /// The number of items a hierarchy filter matches, from the counters.
    async fn counted(
        &self,
        store: &dyn Tables,
        filter: &Hierarchy,
    ) -> Result<Option<i64>, StoreError> {
        let (prefix, column) = match filter {
            Hierarchy::All => ("", "descendants"),
            Hierarchy::ChildrenOf(uid) => (uid.as_str(), "children"),
            Hierarchy::DescendantsOf(uid) => (uid.as_str(), "descendants"),
            Hierarchy::Within(_) => return Ok(None),
        };
        let sql = format!(
            "SELECT {column} FROM {}_counts WHERE prefix = $1",
            self.name
        );
        let direct = read_direct(store, false, |connection| {
            let mut statement = connection.prepare_cached(&sql)?;
            let count = statement.query_row([prefix], |row| row.get::<_, i64>(0));
            rusqlite::OptionalExtension::optional(count)
        });
        let count: Option<i64> = match direct {
            Some(count) => count?,
            None => sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(prefix.to_owned())
                .fetch_optional(store.pool())
                .await
                .map_err(backend_error)?,
        };
        Ok(Some(count.unwrap_or(0)))
    }

    pub(crate) async fn list<R: Resource>(
        &self,
        store: &dyn Tables,
        query: &ListQuery,
    ) -> Result<Page<R>, StoreError> {
        // The counters know hierarchy filters only.
        let counted = match query.public {
            None if query.matching.is_empty() => self.counted(store, &query.filter).await?,
            _ => None,
        };
        // One time for the count and the items (items public after a time).
        let now = protoapi_core::time::now_micros();
        let mut count_arguments = Arguments::default();
        let filter = filters(self, store.dialect(), query, now, &mut count_arguments)?;
        let count_sql = format!(
            "SELECT COUNT(*) FROM {}{}",
            self.name,
            where_clause(&filter)
        );
        // A filter expression may compare fields no index serves: its
        // statements run within the scan budget.
        let bounded = query.matching.condition.is_some();
        let total: i64 = match counted {
            Some(total) => total,
            None => count(store, count_sql, count_arguments, bounded).await?,
        };

        let mut arguments = Arguments::default();
        let mut conditions = filters(self, store.dialect(), query, now, &mut arguments)?;
        if let Some(after) = &query.after {
            if after.len() != query.order_by.len() {
                return Err(StoreError::backend(std::io::Error::other(
                    "page position does not match the order",
                )));
            }
            // Keyset: rows strictly after `after` in the query's order. The
            // leading bound is implied by the disjunction but lets the index
            // seek to the position instead of scanning up to it.
            let first = &query.order_by[0];
            let placeholder = arguments.bind(after[0].clone());
            let bound = if first.descending { "<=" } else { ">=" };
            conditions.push(format!(
                "{} {bound} {placeholder}",
                self.column(&first.field)
            ));
            let mut alternatives = Vec::new();
            for (index, term) in query.order_by.iter().enumerate() {
                let mut all = Vec::new();
                for (previous, value) in query.order_by[..index].iter().zip(after) {
                    let placeholder = arguments.bind(value.clone());
                    all.push(format!("{} = {placeholder}", self.column(&previous.field)));
                }
                let operator = if term.descending { "<" } else { ">" };
                let placeholder = arguments.bind(after[index].clone());
                all.push(format!(
                    "{} {operator} {placeholder}",
                    self.column(&term.field)
                ));
                alternatives.push(format!("({})", all.join(" AND ")));
            }
            conditions.push(format!("({})", alternatives.join(" OR ")));
        }
        let order: Vec<String> = query
            .order_by
            .iter()
            .map(|term| {
                format!(
                    "{} {}",
                    self.column(&term.field),
                    if term.descending { "DESC" } else { "ASC" }
                )
            })
            .collect();
        let limit = arguments.int(i64::try_from(query.limit).unwrap_or(i64::MAX));
        let offset = arguments.int(i64::try_from(query.skip).unwrap_or(i64::MAX));
        let sql = format!(
            "SELECT body FROM {}{} ORDER BY {} LIMIT {limit} OFFSET {offset}",
            self.name,
            where_clause(&conditions),
            order.join(", ")
        );
        Ok(Page {
            items: page(store, sql, arguments, query.byte_budget, bounded).await?,
            total_count: u64::try_from(total).unwrap_or_default(),
        })
    }
}

/// The conditions of a list's filters; hierarchy filters are index range
/// scans, the declared ones primary key or indexed column lookups. Items
/// public after a time are those public at `now` (microseconds).
fn filters(
    table: &Table,
    dialect: Dialect,
    query: &ListQuery,
    now: i64,
    arguments: &mut Arguments,
) -> Result<Vec<String>, StoreError> {
    let mut conditions = hierarchy_filter(&query.filter, arguments);
    match query.public {
        None => {}
        Some(PublicItems::Only(rule)) => {
            conditions.push(public_condition(table, rule, now, arguments));
        }
        Some(PublicItems::Also(rule)) => {
            let within = where_clause(&conditions);
            let within = within.strip_prefix(" WHERE ").unwrap_or("1 = 1");
            let public = public_condition(table, rule, now, arguments);
            conditions = vec![format!("(({within}) OR {public})")];
        }
    }
    conditions.extend(matching_filter(table, &query.matching, arguments)?);
    if let Some(condition) = &query.matching.condition {
        conditions.push(table.condition(dialect, condition, arguments)?);
    }
    Ok(conditions)
}

/// The items `rule` makes public at `now`, as [`Public::admits`] decides
/// from the column: a true flag, or a time that is set (not 0) and not
/// after `now`.
fn public_condition(table: &Table, rule: Public, now: i64, arguments: &mut Arguments) -> String {
    let column = table.column(rule.field());
    match rule {
        Public::If(_) => format!("{column} = 1"),
        Public::After(_) => format!("({column} <> 0 AND {column} <= {})", arguments.int(now)),
    }
}

/// The conditions of the declared filters (`uidp.ids`, `uidp.ancestors_of`,
/// `uidp.in_root`, `name`): they narrow every item, public ones included.
fn matching_filter(
    table: &Table,
    matching: &Matching,
    arguments: &mut Arguments,
) -> Result<Vec<String>, StoreError> {
    let mut conditions = Vec::new();
    match &matching.uids {
        None => {}
        Some(uids) if uids.is_empty() => conditions.push("1 = 0".to_owned()),
        Some(uids) => {
            let placeholders: Vec<String> =
                uids.iter().map(|uid| arguments.text(uid.clone())).collect();
            conditions.push(format!("uid IN ({})", placeholders.join(", ")));
        }
    }
    if let Some(name) = &matching.name {
        let Some(column) = table.columns.iter().find(|column| column.field == "name") else {
            return Err(StoreError::backend(std::io::Error::other(format!(
                "table `{}` has no name column to filter on",
                table.name
            ))));
        };
        conditions.push(format!(
            "{} = {}",
            column.name,
            arguments.text(name.clone())
        ));
    }
    if matching.live_only {
        // Soft-deleted items have a delete time (microseconds), others 0.
        match table.delete_time.filter(|field| table.has_column(field)) {
            Some(field) => conditions.push(format!("{} = 0", table.column(field))),
            None => {
                return Err(StoreError::backend(std::io::Error::other(format!(
                    "table `{}` has no delete time column to hide soft-deleted items",
                    table.name
                ))));
            }
        }
    }
    if matching.root_only {
        // Roots are stored with an empty parent.
        conditions.push("parent = ''".to_owned());
    }
    Ok(conditions)
}

fn hierarchy_filter(filter: &Hierarchy, arguments: &mut Arguments) -> Vec<String> {
    match filter {
        Hierarchy::All => Vec::new(),
        Hierarchy::ChildrenOf(uid) => vec![format!("parent = {}", arguments.text(uid.clone()))],
        Hierarchy::DescendantsOf(uid) => {
            let (start, end) = uidp::descendant_range(uid);
            vec![
                format!("uid >= {}", arguments.text(start)),
                format!("uid < {}", arguments.text(end)),
            ]
        }
        Hierarchy::Within(scopes) if scopes.is_empty() => vec!["1 = 0".to_owned()],
        Hierarchy::Within(scopes) => {
            let alternatives: Vec<String> = scopes
                .iter()
                .map(|scope| {
                    let (start, end) = uidp::descendant_range(scope);
                    let uid = arguments.text(scope.clone());
                    let start = arguments.text(start);
                    let end = arguments.text(end);
                    format!("uid = {uid} OR (uid >= {start} AND uid < {end})")
                })
                .collect();
            vec![format!("({})", alternatives.join(" OR "))]
        }
    }
}

fn where_clause(conditions: &[String]) -> String {
    if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    }
}

/// The one number `sql` counts.
async fn count(
    store: &dyn Tables,
    sql: String,
    arguments: Arguments,
    bounded: bool,
) -> Result<i64, StoreError> {
    let direct = read_direct(store, bounded, |connection| {
        let mut statement = connection.prepare_cached(&sql)?;
        statement.query_row(arguments.direct(), |row| row.get::<_, i64>(0))
    });
    if let Some(total) = direct {
        return total;
    }
    on_pool(store, bounded, async |connection| {
        sqlx::query_scalar_with(sqlx::AssertSqlSafe(sql), arguments.any())
            .fetch_one(connection)
            .await
    })
    .await
}

/// The items of a page `sql` selects (`body` only). Rows are read one at a
/// time, and reading stops one row past the byte budget: a page of large
/// items never holds `limit` of them.
async fn page<R: Resource>(
    store: &dyn Tables,
    sql: String,
    arguments: Arguments,
    budget: u64,
    bounded: bool,
) -> Result<Vec<R>, StoreError> {
    let direct = read_direct(store, bounded, |connection| {
        let mut statement = connection.prepare_cached(&sql)?;
        let mut rows = statement.query(arguments.direct())?;
        let mut bodies = Vec::new();
        let mut budget = Budget::new(budget);
        while let Some(row) = rows.next()? {
            let body: Vec<u8> = row.get(0)?;
            let spent = budget.spend(body.len());
            bodies.push(body);
            if spent {
                break;
            }
        }
        Ok(bodies)
    });
    if let Some(bodies) = direct {
        return bodies?.iter().map(|body| decode_body(body)).collect();
    }
    let bodies = on_pool(store, bounded, async |connection| {
        let mut rows =
            sqlx::query_with(sqlx::AssertSqlSafe(sql), arguments.any()).fetch(connection);
        let mut bodies = Vec::new();
        let mut budget = Budget::new(budget);
        while let Some(row) = rows.try_next().await? {
            let body: Vec<u8> = sqlx::Row::try_get(&row, 0)?;
            let spent = budget.spend(body.len());
            bodies.push(body);
            if spent {
                break;
            }
        }
        Ok(bodies)
    })
    .await?;
    bodies.iter().map(|body| decode_body(body)).collect()
}

/// A page's byte budget: the row read once more than it allows is the
/// page's last.
struct Budget {
    limit: u64,
    read: u64,
}

impl Budget {
    fn new(limit: u64) -> Self {
        Budget { limit, read: 0 }
    }

    /// Counts a row of `bytes`; whether the rows before it passed the limit.
    fn spend(&mut self, bytes: usize) -> bool {
        let over = self.read > self.limit;
        self.read += bytes as u64;
        over
    }
}
