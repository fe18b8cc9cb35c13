//! The standard methods over one SQL table, for any resource type.

use futures_util::TryStreamExt;
use runtime::mask::Update;
use runtime::resource::{Resource, SortValue};
use runtime::row::{ColumnSpec, Row as StorageRow};
use runtime::store::{Hierarchy, ListQuery, Matching, Page, PublicItems, StoreError};
use runtime::uidp;
use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::{Any, AnyPool, Arguments, Row};

use super::Backend;

/// How one collection is stored.
#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    /// The collection id (`roleBindings`), as the generated code names it.
    pub collection: &'static str,
    /// Fields kept in their own indexed column (for ordering, filtering and
    /// finding dependents), from the collection's row type.
    pub columns: &'static [ColumnSpec],
    /// Whether grants derive from its items: each write advances the access
    /// epoch in the same transaction (see `store::grants`).
    pub guards_access: bool,
}

impl Table {
    /// The table of a collection whose columns are the row type `W`.
    pub const fn new<W: StorageRow>(name: &'static str, collection: &'static str) -> Table {
        Table {
            name,
            collection,
            columns: W::COLUMNS,
            guards_access: false,
        }
    }

    /// Marks a table whose items grants derive from.
    pub const fn guarding_access(mut self) -> Table {
        self.guards_access = true;
        self
    }

    /// Commits a write, advancing the access epoch first when grants derive
    /// from this table: a server that sees the commit sees the new epoch.
    async fn commit(
        &self,
        mut transaction: sqlx::Transaction<'static, Any>,
    ) -> Result<(), StoreError> {
        if self.guards_access {
            super::grants::advance_epoch(&mut transaction).await?;
        }
        transaction.commit().await.map_err(backend_error)
    }
}

/// Every item's parent is a group, which must exist when the item is created.
const PARENT_TABLE: &str = "groups";

fn backend_error(error: sqlx::Error) -> StoreError {
    StoreError::backend(error)
}

impl Table {
    fn column_list(&self) -> String {
        let order: String = self
            .columns
            .iter()
            .map(|column| format!("{}, ", column.name))
            .collect();
        format!("uid, parent, {order}etag, body")
    }

    /// The column holding a top-level field (JSON name).
    pub fn column(&self, field: &str) -> &'static str {
        match field {
            "uid" => return "uid",
            "parent" => return "parent",
            _ => {}
        }
        self.columns
            .iter()
            .find(|column| column.field == field)
            .map(|column| column.name)
            .unwrap_or_else(|| panic!("table `{}` has no column for `{field}`", self.name))
    }

    /// Binds a resource's column values in [`Self::columns`] order, taken
    /// through its row type `W`.
    fn bind_row<'q, R: Resource, W: StorageRow<Message = R>>(
        &self,
        mut query: Query<'q, Any, AnyArguments>,
        resource: &R,
    ) -> Query<'q, Any, AnyArguments> {
        query = query
            .bind(resource.uid().to_owned())
            .bind(uidp::parent(resource.uid()).unwrap_or_default().to_owned());
        for value in W::from_message(resource).values() {
            query = match value {
                SortValue::Int(value) => query.bind(value),
                SortValue::Text(value) => query.bind(value),
            };
        }
        query
            .bind(resource.etag().to_owned())
            .bind(resource.encode_to_vec())
    }

    pub async fn insert<R: Resource, W: StorageRow<Message = R>>(
        &self,
        pool: &AnyPool,
        backend: Backend,
        resource: &R,
    ) -> Result<(), StoreError> {
        let columns = self.column_list();
        let count = 4 + self.columns.len();
        let placeholders: Vec<String> = (1..=count).map(|i| format!("${i}")).collect();
        let placeholders = placeholders.join(", ");
        let parent_check =
            format!(" WHERE $2 = '' OR EXISTS (SELECT 1 FROM {PARENT_TABLE} WHERE uid = $2)");
        let sql = format!(
            "INSERT INTO {} ({columns}) SELECT {placeholders}{parent_check}",
            self.name
        );
        let mut transaction = begin_write(pool, backend).await?;
        // The items reference fields name must still exist when this commits:
        // PostgreSQL holds a share lock on them (a concurrent delete waits),
        // SQLite's write lock already serialises the two.
        let share = match backend {
            Backend::Postgres => " FOR SHARE",
            Backend::Sqlite => "",
        };
        for reference in R::REFERENCES {
            let target = super::table_of(reference.collection);
            let sql = format!("SELECT 1 FROM {} WHERE uid = $1{share}", target.name);
            let uid = match resource.sort_value(reference.field) {
                SortValue::Text(uid) => uid,
                SortValue::Int(_) => return Err(StoreError::ReferenceNotFound(reference.field)),
            };
            let found = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(uid)
                .fetch_optional(&mut *transaction)
                .await
                .map_err(backend_error)?;
            if found.is_none() {
                return Err(StoreError::ReferenceNotFound(reference.field));
            }
        }
        let query = self.bind_row::<R, W>(sqlx::query(sqlx::AssertSqlSafe(sql)), resource);
        match query.execute(&mut *transaction).await {
            Ok(result) if result.rows_affected() == 0 => return Err(StoreError::ParentNotFound),
            Ok(_) => {}
            Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
                return Err(StoreError::AlreadyExists);
            }
            Err(error) => return Err(backend_error(error)),
        }
        self.add_counts(&mut transaction, &Counts::of([resource.uid()]), 1)
            .await?;
        self.commit(transaction).await
    }

    /// Adds `sign` × `counts` to the stored counters, in the caller's transaction.
    async fn add_counts(
        &self,
        transaction: &mut sqlx::Transaction<'static, Any>,
        counts: &Counts,
        sign: i64,
    ) -> Result<(), StoreError> {
        let table = format!("{}_counts", self.name);
        let sql = format!(
            "INSERT INTO {table} (prefix, children, descendants) VALUES ($1, $2, $3) \
             ON CONFLICT (prefix) DO UPDATE SET children = {table}.children + excluded.children, \
             descendants = {table}.descendants + excluded.descendants"
        );
        for (prefix, (children, descendants)) in &counts.0 {
            sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                .bind(prefix.clone())
                .bind(sign * children)
                .bind(sign * descendants)
                .execute(&mut **transaction)
                .await
                .map_err(backend_error)?;
        }
        Ok(())
    }

    /// The number of items a hierarchy filter matches, from the counters.
    async fn counted(&self, pool: &AnyPool, filter: &Hierarchy) -> Result<Option<i64>, StoreError> {
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
        let count: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(prefix.to_owned())
            .fetch_optional(pool)
            .await
            .map_err(backend_error)?;
        Ok(Some(count.unwrap_or(0)))
    }

    /// Inserts many new rows in one transaction, without parent checks
    /// (bulk loading; the caller guarantees parents exist).
    pub async fn import<R: Resource, W: StorageRow<Message = R>>(
        &self,
        pool: &AnyPool,
        backend: Backend,
        resources: &[R],
    ) -> Result<(), StoreError> {
        const BATCH: usize = 200;
        let width = 4 + self.columns.len();
        let mut transaction = begin_write(pool, backend).await?;
        for chunk in resources.chunks(BATCH) {
            let rows: Vec<String> = (0..chunk.len())
                .map(|row| {
                    let placeholders: Vec<String> = (1..=width)
                        .map(|column| format!("${}", row * width + column))
                        .collect();
                    format!("({})", placeholders.join(", "))
                })
                .collect();
            let sql = format!(
                "INSERT INTO {} ({}) VALUES {}",
                self.name,
                self.column_list(),
                rows.join(", ")
            );
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            for resource in chunk {
                query = self.bind_row::<R, W>(query, resource);
            }
            query
                .execute(&mut *transaction)
                .await
                .map_err(backend_error)?;
        }
        let counts = Counts::of(resources.iter().map(Resource::uid));
        self.add_counts(&mut transaction, &counts, 1).await?;
        self.commit(transaction).await
    }

    pub async fn get<R: Resource>(
        &self,
        pool: &AnyPool,
        uid: &str,
    ) -> Result<Option<R>, StoreError> {
        let sql = format!("SELECT body FROM {} WHERE uid = $1", self.name);
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(uid.to_owned())
            .fetch_optional(pool)
            .await
            .map_err(backend_error)?;
        row.map(|row| decode(&row)).transpose()
    }

    /// Every item whose column for `field` (JSON name) holds `value`.
    pub async fn find_by<R: Resource>(
        &self,
        pool: &AnyPool,
        field: &str,
        value: &str,
    ) -> Result<Vec<R>, StoreError> {
        let sql = format!(
            "SELECT body FROM {} WHERE {} = $1 ORDER BY uid",
            self.name,
            self.column(field)
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(value.to_owned())
            .fetch_all(pool)
            .await
            .map_err(backend_error)?;
        rows.iter().map(decode).collect()
    }

    pub async fn list<R: Resource>(
        &self,
        pool: &AnyPool,
        query: &ListQuery,
    ) -> Result<Page<R>, StoreError> {
        // The counters know hierarchy filters only.
        let counted = match query.public {
            None if query.matching.is_empty() => self.counted(pool, &query.filter).await?,
            _ => None,
        };
        let mut count_arguments = AnyArguments::default();
        let filter = filters(self, query, &mut count_arguments)?;
        let count_sql = format!(
            "SELECT COUNT(*) FROM {}{}",
            self.name,
            where_clause(&filter)
        );
        let total: i64 = match counted {
            Some(total) => total,
            None => sqlx::query_scalar_with(sqlx::AssertSqlSafe(count_sql), count_arguments)
                .fetch_one(pool)
                .await
                .map_err(backend_error)?,
        };

        let mut arguments = AnyArguments::default();
        let mut conditions = filters(self, query, &mut arguments)?;
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
            let placeholder = bind_sort(&mut arguments, after[0].clone());
            let bound = if first.descending { "<=" } else { ">=" };
            conditions.push(format!(
                "{} {bound} {placeholder}",
                self.column(&first.field)
            ));
            let mut alternatives = Vec::new();
            for (index, term) in query.order_by.iter().enumerate() {
                let mut all = Vec::new();
                for (previous, value) in query.order_by[..index].iter().zip(after) {
                    let placeholder = bind_sort(&mut arguments, value.clone());
                    all.push(format!("{} = {placeholder}", self.column(&previous.field)));
                }
                let operator = if term.descending { "<" } else { ">" };
                let placeholder = bind_sort(&mut arguments, after[index].clone());
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
        let limit = bind(
            &mut arguments,
            i64::try_from(query.limit).unwrap_or(i64::MAX),
        );
        let offset = bind(
            &mut arguments,
            i64::try_from(query.skip).unwrap_or(i64::MAX),
        );
        let sql = format!(
            "SELECT body FROM {}{} ORDER BY {} LIMIT {limit} OFFSET {offset}",
            self.name,
            where_clause(&conditions),
            order.join(", ")
        );
        // Rows are read one at a time, and reading stops one row past the
        // byte budget: a page of large items never holds `limit` of them.
        let mut rows = sqlx::query_with(sqlx::AssertSqlSafe(sql), arguments).fetch(pool);
        let mut items = Vec::new();
        let mut read: u64 = 0;
        while let Some(row) = rows.try_next().await.map_err(backend_error)? {
            let item: R = decode(&row)?;
            let over_budget = read > query.byte_budget;
            read += item.encoded_len() as u64;
            items.push(item);
            if over_budget {
                break;
            }
        }
        Ok(Page {
            items,
            total_count: u64::try_from(total).unwrap_or_default(),
        })
    }

    pub async fn update<R: Resource, W: StorageRow<Message = R>>(
        &self,
        pool: &AnyPool,
        backend: Backend,
        uid: &str,
        update: &Update<R>,
    ) -> Result<Option<R>, StoreError> {
        let mut transaction = begin_write(pool, backend).await?;
        let lock = row_lock(backend);
        let sql = format!("SELECT body FROM {} WHERE uid = $1{lock}", self.name);
        let Some(row) = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(uid.to_owned())
            .fetch_optional(&mut *transaction)
            .await
            .map_err(backend_error)?
        else {
            return Ok(None);
        };
        let stored: R = decode(&row)?;
        let merged = update.apply(&stored).map_err(StoreError::Rejected)?;
        let assignments: String = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, column)| format!("{} = ${}, ", column.name, i + 3))
            .collect();
        let sql = format!(
            "UPDATE {} SET parent = $2, {assignments}etag = ${}, body = ${} WHERE uid = $1",
            self.name,
            self.columns.len() + 3,
            self.columns.len() + 4,
        );
        self.bind_row::<R, W>(sqlx::query(sqlx::AssertSqlSafe(sql)), &merged)
            .execute(&mut *transaction)
            .await
            .map_err(backend_error)?;
        self.commit(transaction).await?;
        Ok(Some(merged))
    }

    pub async fn delete<R: Resource>(
        &self,
        pool: &AnyPool,
        backend: Backend,
        uid: &str,
        etag: Option<&str>,
    ) -> Result<bool, StoreError> {
        let mut transaction = begin_write(pool, backend).await?;
        let lock = row_lock(backend);
        let sql = format!("SELECT etag FROM {} WHERE uid = $1{lock}", self.name);
        let Some(stored_etag) = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql))
            .bind(uid.to_owned())
            .fetch_optional(&mut *transaction)
            .await
            .map_err(backend_error)?
        else {
            return Ok(false);
        };
        if etag.is_some_and(|etag| etag != stored_etag) {
            return Err(StoreError::EtagMismatch);
        }
        let mut dependents = Vec::new();
        for dependent in R::DEPENDENTS {
            let table = super::table_of(dependent.collection);
            let column = table.column(dependent.field);
            let resource_type = dependent.resource_type;
            let sql = format!(
                "SELECT uid FROM {} WHERE {column} = $1 ORDER BY uid LIMIT 10",
                table.name
            );
            let uids: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(uid.to_owned())
                .fetch_all(&mut *transaction)
                .await
                .map_err(backend_error)?;
            dependents.extend(
                uids.into_iter()
                    .map(|uid| ((*resource_type).to_owned(), uid)),
            );
        }
        if !dependents.is_empty() {
            return Err(StoreError::HasDependents(dependents));
        }
        let sql = format!("DELETE FROM {} WHERE uid = $1", self.name);
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(uid.to_owned())
            .execute(&mut *transaction)
            .await
            .map_err(backend_error)?;
        self.add_counts(&mut transaction, &Counts::of([uid]), -1)
            .await?;
        self.commit(transaction).await?;
        Ok(true)
    }
}

/// Counter increments per uid prefix: `(children, descendants)`. The prefix
/// `""` counts roots as its children and every item as its descendants.
pub struct Counts(pub std::collections::BTreeMap<String, (i64, i64)>);

impl Counts {
    pub fn of<'a>(uids: impl IntoIterator<Item = &'a str>) -> Counts {
        let mut counts = std::collections::BTreeMap::<String, (i64, i64)>::new();
        for uid in uids {
            counts
                .entry(uidp::parent(uid).unwrap_or_default().to_owned())
                .or_default()
                .0 += 1;
            counts.entry(String::new()).or_default().1 += 1;
            let mut prefix = uid;
            while let Some(parent) = uidp::parent(prefix) {
                counts.entry(parent.to_owned()).or_default().1 += 1;
                prefix = parent;
            }
        }
        Counts(counts)
    }
}

/// What locks a row read for a write: PostgreSQL locks the row; SQLite's
/// `BEGIN IMMEDIATE` already holds the database's write lock.
fn row_lock(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    }
}

/// A write transaction; SQLite takes the write lock up front so concurrent
/// read-modify-write transactions queue instead of failing to upgrade.
async fn begin_write(
    pool: &AnyPool,
    backend: Backend,
) -> Result<sqlx::Transaction<'static, Any>, StoreError> {
    match backend {
        Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await,
        Backend::Postgres => pool.begin().await,
    }
    .map_err(backend_error)
}

fn decode<R: Resource>(row: &sqlx::any::AnyRow) -> Result<R, StoreError> {
    let body: Vec<u8> = row.try_get("body").map_err(backend_error)?;
    R::decode(body.as_slice()).map_err(StoreError::backend)
}

/// The conditions of a list's filters; hierarchy filters are index range
/// scans, the declared ones primary key or indexed column lookups.
fn filters(
    table: &Table,
    query: &ListQuery,
    arguments: &mut AnyArguments,
) -> Result<Vec<String>, StoreError> {
    let mut conditions = hierarchy_filter(&query.filter, arguments);
    match query.public {
        None => {}
        Some(PublicItems::Only(field)) => conditions.push(format!("{} = 1", table.column(field))),
        Some(PublicItems::Also(field)) => {
            let within = where_clause(&conditions);
            let within = within.strip_prefix(" WHERE ").unwrap_or("1 = 1");
            conditions = vec![format!("(({within}) OR {} = 1)", table.column(field))];
        }
    }
    conditions.extend(matching_filter(table, &query.matching, arguments)?);
    Ok(conditions)
}

/// The conditions of the declared filters (`uidp.ids`, `uidp.ancestors_of`,
/// `uidp.in_root`, `name`): they narrow every item, public ones included.
fn matching_filter(
    table: &Table,
    matching: &Matching,
    arguments: &mut AnyArguments,
) -> Result<Vec<String>, StoreError> {
    let mut conditions = Vec::new();
    match &matching.uids {
        None => {}
        Some(uids) if uids.is_empty() => conditions.push("1 = 0".to_owned()),
        Some(uids) => {
            let placeholders: Vec<String> = uids
                .iter()
                .map(|uid| bind(arguments, uid.clone()))
                .collect();
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
            bind(arguments, name.clone())
        ));
    }
    if matching.root_only {
        // Roots are stored with an empty parent.
        conditions.push("parent = ''".to_owned());
    }
    Ok(conditions)
}

fn hierarchy_filter(filter: &Hierarchy, arguments: &mut AnyArguments) -> Vec<String> {
    match filter {
        Hierarchy::All => Vec::new(),
        Hierarchy::ChildrenOf(uid) => vec![format!("parent = {}", bind(arguments, uid.clone()))],
        Hierarchy::DescendantsOf(uid) => {
            let (start, end) = uidp::descendant_range(uid);
            vec![
                format!("uid >= {}", bind(arguments, start)),
                format!("uid < {}", bind(arguments, end)),
            ]
        }
        Hierarchy::Within(scopes) if scopes.is_empty() => vec!["1 = 0".to_owned()],
        Hierarchy::Within(scopes) => {
            let alternatives: Vec<String> = scopes
                .iter()
                .map(|scope| {
                    let (start, end) = uidp::descendant_range(scope);
                    let uid = bind(arguments, scope.clone());
                    let start = bind(arguments, start);
                    let end = bind(arguments, end);
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

/// Adds an argument and returns its placeholder.
fn bind<'q, T>(arguments: &mut AnyArguments, value: T) -> String
where
    T: 'q + sqlx::Encode<'q, Any> + sqlx::Type<Any>,
{
    arguments
        .add(value)
        .expect("encoding a plain value cannot fail");
    format!("${}", arguments.len())
}

fn bind_sort(arguments: &mut AnyArguments, value: SortValue) -> String {
    match value {
        SortValue::Int(value) => bind(arguments, value),
        SortValue::Text(value) => bind(arguments, value),
    }
}
