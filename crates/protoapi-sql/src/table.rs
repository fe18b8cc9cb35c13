//! The standard methods over one SQL table, for any resource type.

use std::collections::HashMap;

use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::{Any, Row};

use sqlx::AnyPool;

use super::dialect::Dialect;
use protoapi_core::dry_run::DryRun;
use protoapi_core::mask::Update;
use protoapi_core::resource::{Dependent, Public, Reference, Resource, SortValue};
use protoapi_core::row::{self, ColumnSpec};
use protoapi_core::store::StoreError;

/// What a table needs of the store it lives in: the database, and the
/// other tables its rules name.
pub(crate) trait Tables: Sync {
    fn pool(&self) -> &AnyPool;
    fn dialect(&self) -> Dialect;
    /// The table of a resource type.
    fn table_of(&self, resource_type: &str) -> Result<&Table, StoreError>;
    /// Every table.
    fn tables(&self) -> Vec<&Table>;
    /// Point reads on the calling thread, where the engine allows them.
    fn direct(&self) -> Option<&crate::direct::DirectReads>;
    /// What a filtered list's statement may examine.
    fn filter_budget(&self) -> crate::budget::FilterBudget;
}

/// What `SqlStore::access_read` found.
#[derive(Debug)]
pub struct AccessRead<R, T> {
    /// The access epoch of the subject.
    pub subject_epoch: i64,
    /// Each item naming the subject, the target it names, and the target's
    /// access epoch.
    pub items: Vec<(R, T, i64)>,
}

mod arguments;
mod cascade;
mod condition;
mod delete;
mod list;
pub(crate) mod request_ids;
mod scan_budget;

use arguments::Arguments;

/// Reads the named columns' values from a stored body.
pub(super) type ValuesOf = fn(&[u8], &[&str]) -> Result<Vec<SortValue>, prost::DecodeError>;

/// How one resource type is stored: its row type's columns, and the rules
/// its `Resource` implementation declares.
#[derive(Clone, Debug)]
pub struct Table {
    /// The table name: the collection id in snake case (`book_copies`).
    pub(super) name: String,
    pub(super) resource_type: &'static str,
    /// Fields kept in their own indexed column (for ordering, filtering and
    /// finding dependents), from the row type.
    pub(super) columns: &'static [ColumnSpec],
    /// The field (JSON name) whose value is the access subject of an item
    /// when access decisions derive from its items: each write advances that
    /// subject's access epoch in the same transaction.
    pub(super) access_subject: Option<&'static str>,
    /// Fields (JSON names) whose columns get no index.
    pub(super) unindexed: &'static [&'static str],
    parent_type: Option<&'static str>,
    /// The key of an item's parent (`Resource::parent_key`: the UIDP's
    /// parent, or the resource name minus its last `collection/id`).
    pub(super) parent_of: fn(&str) -> Option<&str>,
    references: &'static [Reference],
    dependents: &'static [Dependent],
    order_by: &'static [&'static str],
    filters: &'static [&'static str],
    public: Option<Public>,
    /// The soft-delete time's field (JSON name), kept in a column.
    delete_time: Option<&'static str>,
    /// Decodes a stored body and reads the named columns' values (filling a
    /// column added to an existing table).
    pub(super) values_of: ValuesOf,
    /// What the application deletes with each item.
    pub(super) on_delete: crate::on_delete::Effect,
}

impl Table {
    /// The table of the resource whose columns the row type `W` declares.
    pub fn of<W: row::Row>() -> Table
    where
        W::Message: Resource,
    {
        fn values_of<R: Resource>(
            body: &[u8],
            fields: &[&str],
        ) -> Result<Vec<SortValue>, prost::DecodeError> {
            let resource = R::decode(body)?;
            Ok(fields
                .iter()
                .map(|field| resource.sort_value(field))
                .collect())
        }
        type R<W> = <W as row::Row>::Message;
        Table {
            name: snake_case(R::<W>::COLLECTION),
            resource_type: R::<W>::TYPE,
            columns: W::COLUMNS,
            access_subject: None,
            unindexed: &[],
            parent_type: R::<W>::PARENT_TYPE,
            parent_of: <R<W> as Resource>::parent_key,
            references: R::<W>::REFERENCES,
            dependents: R::<W>::DEPENDENTS,
            order_by: R::<W>::ORDER_BY,
            filters: R::<W>::FILTERS,
            public: R::<W>::PUBLIC,
            delete_time: R::<W>::DELETE_TIME,
            values_of: values_of::<R<W>>,
            on_delete: crate::on_delete::Effect::default(),
        }
    }

    /// Marks a table whose items access decisions derive from, each item
    /// being the subject of its own (a role: what it grants). See
    /// `SqlStore::access_epochs`.
    pub fn guarding_access(self) -> Table {
        self.guarding_access_of("uid")
    }

    /// Marks a table whose items access decisions derive from, the subject
    /// of an item being the uid in its `field` (a role binding: the identity
    /// it grants to). The field needs a column.
    pub fn guarding_access_of(mut self, field: &'static str) -> Table {
        self.access_subject = Some(field);
        self
    }

    /// The access subject of an item, when this table guards access.
    fn subject_of<R: Resource>(&self, item: &R) -> Option<String> {
        let field = self.access_subject?;
        Some(match item.sort_value(field) {
            SortValue::Text(value) => value,
            SortValue::Int(value) => value.to_string(),
        })
    }

    /// Commits a write (rolls back a dry run, [`DryRun`]), advancing the
    /// access epoch of each subject it touched first: a server that sees the commit sees the new epochs.
    /// Only decisions derived from those subjects go stale, so a write in
    /// one hierarchy leaves the cached grants of every other one be.
    async fn commit(
        &self,
        mut transaction: sqlx::Transaction<'static, Any>,
        subjects: &[Option<String>],
    ) -> Result<(), StoreError> {
        let mut subjects: Vec<&String> = subjects.iter().flatten().collect();
        subjects.sort();
        subjects.dedup();
        // A dry run (AIP-163 `validate_only`) ends here, every check run.
        if DryRun::current() {
            return transaction.rollback().await.map_err(backend_error);
        }
        for subject in subjects {
            sqlx::query(
                "INSERT INTO access_epochs (subject, epoch) VALUES ($1, 1) \
                 ON CONFLICT (subject) DO UPDATE SET epoch = access_epochs.epoch + 1",
            )
            .bind(subject.clone())
            .execute(&mut *transaction)
            .await
            .map_err(backend_error)?;
        }
        transaction.commit().await.map_err(backend_error)
    }

    /// Whether a top-level field (JSON name) has a column.
    fn has_column(&self, field: &str) -> bool {
        matches!(field, "uid" | "parent") || self.columns.iter().any(|c| c.field == field)
    }
}

/// What a generated API's `tables()` builds: `SqlOptions::new(tables())`.
impl protoapi_core::row::TableOf for Table {
    fn of<W: row::Row>() -> Table
    where
        W::Message: Resource,
    {
        Table::of::<W>()
    }

    fn guarding_access(self) -> Table {
        Table::guarding_access(self)
    }

    fn guarding_access_of(self, field: &'static str) -> Table {
        Table::guarding_access_of(self, field)
    }

    fn unindexed(mut self, fields: &'static [&'static str]) -> Table {
        self.unindexed = fields;
        self
    }
}

/// `bookCopies` → `book_copies`.
fn snake_case(collection: &str) -> String {
    let mut name = String::with_capacity(collection.len() + 4);
    for c in collection.chars() {
        if c.is_ascii_uppercase() {
            name.push('_');
            name.push(c.to_ascii_lowercase());
        } else {
            name.push(c);
        }
    }
    name
}

/// Why the tables cannot keep the rules their resources declare, if they
/// cannot: a rule naming a resource type without a table, or a field that
/// ordering, filters or dependents look up without a column.
pub(super) fn check_rules(tables: &HashMap<&'static str, Table>) -> Result<(), String> {
    let mut problems = Vec::new();
    let stored = |resource_type: &str, why: String, problems: &mut Vec<String>| {
        let table = tables.get(resource_type);
        if table.is_none() {
            problems.push(format!("{why} names `{resource_type}`, which has no table"));
        }
        table
    };
    for table in tables.values() {
        let name = &table.name;
        if let Some(parent) = table.parent_type
            && let Some(parent_table) =
                stored(parent, format!("the parent of `{name}`"), &mut problems)
            && !parent_table
                .dependents
                .iter()
                .any(|d| d.resource_type == table.resource_type && d.field == "parent")
        {
            // A create locks its parent, and the delete of the parent waits
            // and then finds the child among its dependents: only if it
            // looks for them.
            problems.push(format!(
                "`{name}` is created under `{}`, whose deletes it does not block: add it to `delete_blocked_by` of `{}`",
                parent_table.name, parent_table.name
            ));
        }
        for reference in table.references {
            let why = format!("reference `{}` of `{name}`", reference.field);
            stored(reference.resource_type, why, &mut problems);
        }
        for dependent in table.dependents {
            let why = format!("a dependent of `{name}`");
            if let Some(other) = stored(dependent.resource_type, why, &mut problems)
                && !other.has_column(dependent.field)
            {
                problems.push(format!(
                    "`{}` needs a column for `{}` (it blocks deletes of `{name}`)",
                    other.name, dependent.field
                ));
            }
        }
        let needed = table
            .order_by
            .iter()
            .map(|field| (*field, "order_by"))
            .chain(table.public.map(|rule| (rule.field(), "public items")))
            .chain(table.delete_time.map(|field| (field, "soft delete")))
            .chain(table.access_subject.map(|field| (field, "access subjects")))
            .chain(
                table
                    .filters
                    .contains(&"name")
                    .then_some(("name", "the name filter")),
            );
        for (field, why) in needed {
            if !table.has_column(field) {
                problems.push(format!("`{name}` needs a column for `{field}` ({why})"));
            }
        }
        // Public items are found by comparing numbers: a flag, a time.
        if let Some(rule) = table.public
            && let Some(column) = table.columns.iter().find(|c| c.field == rule.field())
            && !column.integer
        {
            problems.push(format!(
                "`{name}` keeps `{}` as text; public items need it as a number (a `bool`, or an `i64` with `#[row(timestamp)]`)",
                rule.field()
            ));
        }
        // Soft-deleted items are found by their time: a number, 0 when unset.
        if let Some(field) = table.delete_time
            && let Some(column) = table.columns.iter().find(|c| c.field == field)
            && !column.integer
        {
            problems.push(format!(
                "`{name}` keeps `{field}` as text; soft deletes need it as an `i64` with `#[row(timestamp)]`"
            ));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    problems.sort();
    Err(format!(
        "the SQL tables cannot keep the declared rules; declare the missing tables and row fields: {}",
        problems.join("; ")
    ))
}

fn backend_error(error: sqlx::Error) -> StoreError {
    super::fault::store_error(error)
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

    /// Binds a resource's column values in [`Self::columns`] order.
    fn bind_row<'q, R: Resource>(
        &self,
        mut query: Query<'q, Any, AnyArguments>,
        resource: &R,
    ) -> Query<'q, Any, AnyArguments> {
        query = query.bind(resource.key().to_owned()).bind(
            (self.parent_of)(resource.key())
                .unwrap_or_default()
                .to_owned(),
        );
        for column in self.columns {
            query = bind_value(query, resource.sort_value(column.field));
        }
        query
            .bind(resource.etag().to_owned())
            .bind(resource.encode_to_vec())
    }

    pub(super) async fn insert<R: Resource>(
        &self,
        store: &dyn Tables,
        resource: &R,
    ) -> Result<(), StoreError> {
        let columns = self.column_list();
        let count = 4 + self.columns.len();
        let placeholders: Vec<String> = (1..=count).map(|i| format!("${i}")).collect();
        let placeholders = placeholders.join(", ");
        let sql = format!(
            "INSERT INTO {} ({columns}) VALUES ({placeholders})",
            self.name
        );
        // Roots, and items whose parents are stored outside the API, need no
        // parent row.
        let parent = match (self.parent_type, (self.parent_of)(resource.key())) {
            (Some(parent_type), Some(parent)) if !parent.is_empty() => {
                Some((store.table_of(parent_type)?, parent))
            }
            _ => None,
        };
        let mut transaction = begin_write(store).await?;
        // The parent must still exist when this commits (as must the items
        // reference fields name, `check_references`). A delete locks its row (`FOR UPDATE`), looks
        // for dependents, then deletes it; under READ COMMITTED each
        // statement sees what committed before it began. Delete first: the
        // share lock below waits for the delete to end, then finds the row
        // gone (ParentNotFound), or still there if the delete rolled back.
        // Insert first: the delete's `FOR UPDATE` waits for this commit, and
        // its dependents query, a later statement, sees the new item and
        // refuses (when the parent type lists this collection among its
        // dependents, as groups list every child collection). Either way one
        // of the two fails.
        if let Some((table, parent)) = parent {
            let share = share_lock(store.dialect());
            let sql = format!("SELECT 1 FROM {} WHERE uid = $1{share}", table.name);
            let found = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(parent.to_owned())
                .fetch_optional(&mut *transaction)
                .await
                .map_err(backend_error)?;
            if found.is_none() {
                return Err(StoreError::ParentNotFound);
            }
        }
        self.check_references(store, &mut transaction, resource, None)
            .await?;
        let query = self.bind_row::<R>(sqlx::query(sqlx::AssertSqlSafe(sql)), resource);
        match query.execute(&mut *transaction).await {
            Ok(_) => {}
            Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
                return Err(StoreError::AlreadyExists);
            }
            Err(error) => return Err(backend_error(error)),
        }
        self.add_counts(
            &mut transaction,
            &Counts::of([resource.key()], self.parent_of),
            1,
        )
        .await?;
        self.record(&mut transaction, || resource.encode_to_vec())
            .await?;
        self.commit(transaction, &[self.subject_of(resource)]).await
    }

    /// `ReferenceNotFound` unless each reference field of `resource` that
    /// differs from `previous` (all of them on an insert) names a stored
    /// item, which stays until `transaction` ends: PostgreSQL holds a share
    /// lock on it (a concurrent delete waits), SQLite's write lock already
    /// serialises the two. An empty field names nothing.
    async fn check_references<R: Resource>(
        &self,
        store: &dyn Tables,
        transaction: &mut sqlx::Transaction<'static, Any>,
        resource: &R,
        previous: Option<&R>,
    ) -> Result<(), StoreError> {
        let share = share_lock(store.dialect());
        for reference in self.references {
            let value = resource.sort_value(reference.field);
            if previous.is_some_and(|previous| previous.sort_value(reference.field) == value) {
                continue;
            }
            let key = match value {
                SortValue::Text(key) if key.is_empty() => continue,
                SortValue::Text(key) => key,
                SortValue::Int(_) => return Err(StoreError::ReferenceNotFound(reference.field)),
            };
            let target = store.table_of(reference.resource_type)?;
            let sql = format!("SELECT 1 FROM {} WHERE uid = $1{share}", target.name);
            let found = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(key)
                .fetch_optional(&mut **transaction)
                .await
                .map_err(backend_error)?;
            if found.is_none() {
                return Err(StoreError::ReferenceNotFound(reference.field));
            }
        }
        Ok(())
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

    /// Inserts many new rows in one transaction, without parent checks
    /// (bulk loading; the caller guarantees parents exist).
    pub(super) async fn import<R: Resource>(
        &self,
        store: &dyn Tables,
        resources: &[R],
    ) -> Result<(), StoreError> {
        const BATCH: usize = 200;
        let width = 4 + self.columns.len();
        let mut transaction = begin_write(store).await?;
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
                query = self.bind_row::<R>(query, resource);
            }
            query
                .execute(&mut *transaction)
                .await
                .map_err(backend_error)?;
        }
        let counts = Counts::of(resources.iter().map(Resource::key), self.parent_of);
        self.add_counts(&mut transaction, &counts, 1).await?;
        let subjects: Vec<Option<String>> =
            resources.iter().map(|item| self.subject_of(item)).collect();
        self.commit(transaction, &subjects).await
    }

    pub(super) async fn get<R: Resource>(
        &self,
        store: &dyn Tables,
        uid: &str,
    ) -> Result<Option<R>, StoreError> {
        let sql = format!("SELECT body FROM {} WHERE uid = $1", self.name);
        let direct = read_direct(store, |connection| {
            let mut statement = connection.prepare_cached(&sql)?;
            let body = statement.query_row([uid], |row| row.get::<_, Vec<u8>>(0));
            rusqlite::OptionalExtension::optional(body)
        });
        if let Some(body) = direct {
            return body.map(|body| decode_body(&body)).transpose();
        }
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(uid.to_owned())
            .fetch_optional(store.pool())
            .await
            .map_err(backend_error)?;
        row.map(|row| decode(&row)).transpose()
    }

    /// Every item whose column for `field` (JSON name) holds `value`.
    /// The items whose `field` holds `subject`, each with the item of
    /// `target` its `via` field names, and the access epochs of `subject`
    /// and of each target: one statement, so one consistent snapshot.
    pub(super) async fn access_read<R: Resource, T: Resource>(
        &self,
        store: &dyn Tables,
        target: &Table,
        field: &str,
        via: &str,
        subject: &str,
    ) -> Result<AccessRead<R, T>, StoreError> {
        let sql = format!(
            "SELECT s.epoch AS subject_epoch, g.item, g.target, COALESCE(e.epoch, 0) AS target_epoch \
             FROM (SELECT COALESCE((SELECT epoch FROM access_epochs WHERE subject = $1), 0) AS epoch) s \
             LEFT JOIN (SELECT i.uid AS uid, i.body AS item, t.uid AS target_uid, t.body AS target \
                        FROM {items} i JOIN {targets} t ON t.uid = i.{via} WHERE i.{field} = $1) g ON 1 = 1 \
             LEFT JOIN access_epochs e ON e.subject = g.target_uid \
             ORDER BY g.uid",
            items = self.name,
            targets = target.name,
            via = self.column(via),
            field = self.column(field),
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(subject.to_owned())
            .fetch_all(store.pool())
            .await
            .map_err(backend_error)?;
        let mut read = AccessRead {
            subject_epoch: 0,
            items: Vec::with_capacity(rows.len()),
        };
        for row in &rows {
            read.subject_epoch = row.try_get("subject_epoch").map_err(backend_error)?;
            let Some(item) = row
                .try_get::<Option<Vec<u8>>, _>("item")
                .map_err(backend_error)?
            else {
                continue;
            };
            let target: Vec<u8> = row.try_get("target").map_err(backend_error)?;
            read.items.push((
                R::decode(item.as_slice()).map_err(StoreError::backend)?,
                T::decode(target.as_slice()).map_err(StoreError::backend)?,
                row.try_get("target_epoch").map_err(backend_error)?,
            ));
        }
        Ok(read)
    }

    pub(super) async fn find_by<R: Resource>(
        &self,
        store: &dyn Tables,
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
            .fetch_all(store.pool())
            .await
            .map_err(backend_error)?;
        rows.iter().map(decode).collect()
    }

    pub(super) async fn update<R: Resource>(
        &self,
        store: &dyn Tables,
        uid: &str,
        update: &Update<R>,
    ) -> Result<Option<R>, StoreError> {
        let mut transaction = begin_write(store).await?;
        let lock = row_lock(store.dialect());
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
        self.check_references(store, &mut transaction, &merged, Some(&stored))
            .await?;
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
        self.bind_row::<R>(sqlx::query(sqlx::AssertSqlSafe(sql)), &merged)
            .execute(&mut *transaction)
            .await
            .map_err(backend_error)?;
        self.record(&mut transaction, || merged.encode_to_vec())
            .await?;
        let subjects = [self.subject_of(&stored), self.subject_of(&merged)];
        self.commit(transaction, &subjects).await?;
        Ok(Some(merged))
    }
}

/// Counter increments per uid prefix: `(children, descendants)`. The prefix
/// `""` counts roots as its children and every item as its descendants.
pub struct Counts(pub std::collections::BTreeMap<String, (i64, i64)>);

impl Counts {
    /// The counts of `uids`, whose parents `parent_of` reads (a UIDP's or
    /// a resource name's, see `Resource::parent_key`).
    pub fn of<'a>(
        uids: impl IntoIterator<Item = &'a str>,
        parent_of: fn(&str) -> Option<&str>,
    ) -> Counts {
        let mut counts = std::collections::BTreeMap::<String, (i64, i64)>::new();
        for uid in uids {
            counts
                .entry(parent_of(uid).unwrap_or_default().to_owned())
                .or_default()
                .0 += 1;
            counts.entry(String::new()).or_default().1 += 1;
            let mut prefix = uid;
            while let Some(parent) = parent_of(prefix) {
                counts.entry(parent.to_owned()).or_default().1 += 1;
                prefix = parent;
            }
        }
        Counts(counts)
    }
}

/// What locks a row read for a write: PostgreSQL locks the row; SQLite's
/// `BEGIN IMMEDIATE` already holds the database's write lock.
/// What keeps a row read in a write transaction from being deleted until
/// it ends: PostgreSQL's share lock (a concurrent delete waits); SQLite's
/// write lock already serialises the two.
fn share_lock(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => " FOR SHARE",
        Dialect::Sqlite => "",
    }
}

fn row_lock(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => " FOR UPDATE",
        Dialect::Sqlite => "",
    }
}

/// A write transaction; SQLite takes the write lock up front so concurrent
/// read-modify-write transactions queue instead of failing to upgrade.
async fn begin_write(store: &dyn Tables) -> Result<sqlx::Transaction<'static, Any>, StoreError> {
    match store.dialect() {
        Dialect::Sqlite => store.pool().begin_with("BEGIN IMMEDIATE").await,
        Dialect::Postgres => store.pool().begin().await,
    }
    .map_err(backend_error)
}

fn decode<R: Resource>(row: &sqlx::any::AnyRow) -> Result<R, StoreError> {
    let body: Vec<u8> = row.try_get("body").map_err(backend_error)?;
    decode_body(&body)
}

fn decode_body<R: Resource>(body: &[u8]) -> Result<R, StoreError> {
    R::decode(body).map_err(StoreError::backend)
}

/// Binds a column value to the next placeholder of `query`.
pub(super) fn bind_value<'q>(
    query: Query<'q, Any, AnyArguments>,
    value: SortValue,
) -> Query<'q, Any, AnyArguments> {
    match value {
        SortValue::Int(value) => query.bind(value),
        SortValue::Text(value) => query.bind(value),
    }
}

/// `read` on the calling thread, where the store allows it (`crate::direct`);
/// `None` when the caller is to read through the pool.
fn read_direct<T>(
    store: &dyn Tables,
    read: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T>,
) -> Option<T> {
    store.direct().and_then(|direct| direct.read(read))
}
