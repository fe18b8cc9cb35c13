//! What the registry knows besides blob contents, in the application's SQL
//! store (SQLite or PostgreSQL), so that replicas on one database act as one
//! registry: which blobs each repository holds (`registry_blobs`), its
//! manifests (`registry_manifests`, with what each refers to in
//! `registry_references`), its tags (`registry_tags`), the uploads in
//! progress (`registry_uploads`), and the manifests the application's
//! catalog has yet to hear about (`registry_changes`, written in the same
//! transaction as each change).

use protoapi_sql::{Dialect, Migration};
use serde_json::Value;
use sqlx::AnyPool;
use sqlx::Row as _;

use crate::catalog::Image;
use crate::digest::Digest;
use crate::manifest::Manifest;
use crate::path::Reference;

/// The tables, a tag's column of type `$tag`.
macro_rules! tables {
    ($tag:literal) => {
        &[
            "CREATE TABLE registry_blobs (repo TEXT NOT NULL, digest TEXT NOT NULL, size BIGINT NOT NULL, \
             created BIGINT NOT NULL, PRIMARY KEY (repo, digest))",
            "CREATE INDEX registry_blobs_by_digest ON registry_blobs (digest)",
            "CREATE TABLE registry_manifests (repo TEXT NOT NULL, digest TEXT NOT NULL, media_type TEXT NOT NULL, \
             size BIGINT NOT NULL, content TEXT NOT NULL, subject TEXT NOT NULL, artifact_type TEXT NOT NULL, \
             annotations TEXT NOT NULL, created BIGINT NOT NULL, PRIMARY KEY (repo, digest))",
            "CREATE INDEX registry_manifests_by_subject ON registry_manifests (repo, subject)",
            "CREATE TABLE registry_references (repo TEXT NOT NULL, manifest TEXT NOT NULL, target TEXT NOT NULL, \
             PRIMARY KEY (repo, manifest, target))",
            "CREATE INDEX registry_references_by_target ON registry_references (repo, target)",
            concat!(
                "CREATE TABLE registry_tags (repo TEXT NOT NULL, tag ",
                $tag,
                " NOT NULL, digest TEXT NOT NULL, updated BIGINT NOT NULL, PRIMARY KEY (repo, tag))"
            ),
            "CREATE TABLE registry_uploads (id TEXT PRIMARY KEY, repo TEXT NOT NULL, created BIGINT NOT NULL)",
        ]
    };
}

/// The tables for SQLite, where text compares byte-wise already.
const SQLITE: &[&str] = tables!("TEXT");

/// The tables for PostgreSQL, tags in byte order (`COLLATE "C"`): the tags
/// list is in lexical order, and its `last` is a position in it.
const POSTGRES: &[&str] = tables!("TEXT COLLATE \"C\"");

/// The second step: what the catalog has yet to hear about, each change
/// with a number that tells a later change of the same manifest apart.
const CHANGES: &[&str] = &[
    "CREATE TABLE registry_changes (repo TEXT NOT NULL, digest TEXT NOT NULL, seq BIGINT NOT NULL, \
     PRIMARY KEY (repo, digest))",
];

/// The schema steps creating the registry's tables, as the application's
/// migrations `first` and `first + 1` (versions its other steps and the
/// library's do not take).
pub fn migrations(first: i64, dialect: Dialect) -> [Migration; 2] {
    let statements = match dialect {
        Dialect::Sqlite => SQLITE,
        Dialect::Postgres => POSTGRES,
    };
    [
        Migration::new(first, "registry", statements),
        Migration::new(first + 1, "registry changes", CHANGES),
    ]
}

/// A manifest whose catalog entry may be out of date: the change numbered
/// `seq` has not been told yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub repo: String,
    pub digest: Digest,
    pub seq: i64,
}

/// A stored manifest.
#[derive(Debug)]
pub struct Stored {
    pub digest: String,
    pub media_type: String,
    pub content: String,
}

/// The registry's tables in a pool.
#[derive(Clone, Debug)]
pub struct Index {
    pool: AnyPool,
}

type Sql<T> = Result<T, sqlx::Error>;

impl Index {
    pub fn new(pool: AnyPool) -> Self {
        Index { pool }
    }

    /// The size of `digest` in `repo`, if the repository holds it.
    pub async fn blob(&self, repo: &str, digest: &Digest) -> Sql<Option<u64>> {
        let row = sqlx::query("SELECT size FROM registry_blobs WHERE repo = $1 AND digest = $2")
            .bind(repo.to_owned())
            .bind(digest.as_str().to_owned())
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| row.try_get::<i64, _>(0).map(|size| size.max(0) as u64))
            .transpose()
    }

    /// Records that `repo` holds `digest`.
    pub async fn link_blob(&self, repo: &str, digest: &Digest, size: u64) -> Sql<()> {
        sqlx::query(
            "INSERT INTO registry_blobs (repo, digest, size, created) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (repo, digest) DO UPDATE SET created = excluded.created",
        )
        .bind(repo.to_owned())
        .bind(digest.as_str().to_owned())
        .bind(i64::try_from(size).unwrap_or(i64::MAX))
        .bind(protoapi_core::time::now_micros())
        .execute(&self.pool)
        .await
        .map(drop)
    }

    /// Forgets that `repo` holds `digest`; whether it did.
    pub async fn unlink_blob(&self, repo: &str, digest: &Digest) -> Sql<bool> {
        let done = sqlx::query("DELETE FROM registry_blobs WHERE repo = $1 AND digest = $2")
            .bind(repo.to_owned())
            .bind(digest.as_str().to_owned())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Of `digests`, those `repo` holds no blob of.
    pub async fn missing_blobs(&self, repo: &str, digests: &[Digest]) -> Sql<Vec<Digest>> {
        let mut missing = Vec::new();
        for digest in digests {
            if self.blob(repo, digest).await?.is_none() {
                missing.push(digest.clone());
            }
        }
        Ok(missing)
    }

    /// Of `digests`, those `repo` holds no manifest of.
    pub async fn missing_manifests(&self, repo: &str, digests: &[Digest]) -> Sql<Vec<Digest>> {
        let mut missing = Vec::new();
        for digest in digests {
            if self
                .manifest(repo, &Reference::Digest(digest.clone()))
                .await?
                .is_none()
            {
                missing.push(digest.clone());
            }
        }
        Ok(missing)
    }

    /// The manifest `reference` names in `repo`.
    pub async fn manifest(&self, repo: &str, reference: &Reference) -> Sql<Option<Stored>> {
        let digest = match reference {
            Reference::Digest(digest) => digest.as_str().to_owned(),
            Reference::Tag(tag) => {
                let row =
                    sqlx::query("SELECT digest FROM registry_tags WHERE repo = $1 AND tag = $2")
                        .bind(repo.to_owned())
                        .bind(tag.clone())
                        .fetch_optional(&self.pool)
                        .await?;
                match row {
                    Some(row) => row.try_get(0)?,
                    None => return Ok(None),
                }
            }
        };
        let row = sqlx::query(
            "SELECT media_type, content FROM registry_manifests WHERE repo = $1 AND digest = $2",
        )
        .bind(repo.to_owned())
        .bind(digest.clone())
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| {
            Ok(Stored {
                digest,
                media_type: row.try_get(0)?,
                content: row.try_get(1)?,
            })
        })
        .transpose()
    }

    /// The manifest `digest` of `repo` as the catalog shows it.
    pub async fn image(&self, repo: &str, digest: &Digest) -> Sql<Option<Image>> {
        let row = sqlx::query(
            "SELECT media_type, size, artifact_type, subject, created FROM registry_manifests \
             WHERE repo = $1 AND digest = $2",
        )
        .bind(repo.to_owned())
        .bind(digest.as_str().to_owned())
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let tags = sqlx::query(
            "SELECT tag FROM registry_tags WHERE repo = $1 AND digest = $2 ORDER BY tag",
        )
        .bind(repo.to_owned())
        .bind(digest.as_str().to_owned())
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Sql<Vec<String>>>()?;
        let blobs: i64 = sqlx::query(
            "SELECT CAST(COALESCE(SUM(b.size), 0) AS BIGINT) FROM registry_references r \
             JOIN registry_blobs b ON b.repo = r.repo AND b.digest = r.target \
             WHERE r.repo = $1 AND r.manifest = $2",
        )
        .bind(repo.to_owned())
        .bind(digest.as_str().to_owned())
        .fetch_one(&self.pool)
        .await?
        .try_get(0)?;
        let size: i64 = row.try_get(1)?;
        Ok(Some(Image {
            repository: repo.to_owned(),
            digest: digest.clone(),
            media_type: row.try_get(0)?,
            size: u64::try_from(size.saturating_add(blobs)).unwrap_or_default(),
            tags,
            artifact_type: row.try_get(2)?,
            subject: row.try_get(3)?,
            pushed_micros: row.try_get(4)?,
        }))
    }

    /// Stores `manifest` (its `content` hashing to `digest`) in `repo`, and
    /// points `tag` at it, in one transaction that also records what the
    /// catalog must hear: the manifest, and the one the tag named before.
    pub async fn put_manifest(
        &self,
        repo: &str,
        digest: &Digest,
        manifest: &Manifest,
        content: &str,
        tag: Option<&str>,
    ) -> Sql<Vec<Change>> {
        let now = protoapi_core::time::now_micros();
        let mut transaction = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO registry_manifests (repo, digest, media_type, size, content, subject, \
             artifact_type, annotations, created) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
             ON CONFLICT (repo, digest) DO NOTHING",
        )
        .bind(repo.to_owned())
        .bind(digest.as_str().to_owned())
        .bind(manifest.media_type.to_owned())
        .bind(content.len() as i64)
        .bind(content.to_owned())
        .bind(
            manifest
                .subject
                .as_ref()
                .map(|d| d.as_str().to_owned())
                .unwrap_or_default(),
        )
        .bind(manifest.artifact_type.clone().unwrap_or_default())
        .bind(
            manifest
                .annotations
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default(),
        )
        .bind(now)
        .execute(&mut *transaction)
        .await?;
        for target in manifest.blobs.iter().chain(&manifest.manifests) {
            sqlx::query(
                "INSERT INTO registry_references (repo, manifest, target) VALUES ($1, $2, $3) \
                 ON CONFLICT (repo, manifest, target) DO NOTHING",
            )
            .bind(repo.to_owned())
            .bind(digest.as_str().to_owned())
            .bind(target.as_str().to_owned())
            .execute(&mut *transaction)
            .await?;
        }
        let mut changed = vec![digest.clone()];
        if let Some(tag) = tag {
            let previous =
                sqlx::query("SELECT digest FROM registry_tags WHERE repo = $1 AND tag = $2")
                    .bind(repo.to_owned())
                    .bind(tag.to_owned())
                    .fetch_optional(&mut *transaction)
                    .await?
                    .map(|row| row.try_get::<String, _>(0))
                    .transpose()?
                    .and_then(|previous| Digest::parse(&previous).ok());
            changed.extend(previous.filter(|previous| previous != digest));
            sqlx::query(
                "INSERT INTO registry_tags (repo, tag, digest, updated) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (repo, tag) DO UPDATE SET digest = excluded.digest, updated = excluded.updated",
            )
            .bind(repo.to_owned())
            .bind(tag.to_owned())
            .bind(digest.as_str().to_owned())
            .bind(now)
            .execute(&mut *transaction)
            .await?;
        }
        let changes = record_changes(&mut transaction, repo, &changed).await?;
        transaction.commit().await?;
        Ok(changes)
    }

    /// Deletes the manifest `digest` of `repo`, its tags and what it refers
    /// to, recording the change; `None` when there was none.
    pub async fn delete_manifest(&self, repo: &str, digest: &Digest) -> Sql<Option<Vec<Change>>> {
        let mut transaction = self.pool.begin().await?;
        // The whole hex digest as a prefix names that digest alone.
        let deleted = delete_manifests_by_prefix(&mut transaction, repo, digest.hex()).await?;
        if deleted == 0 {
            return Ok(None);
        }
        let changes = record_changes(&mut transaction, repo, std::slice::from_ref(digest)).await?;
        transaction.commit().await?;
        Ok(Some(changes))
    }

    /// Removes `tag` from `repo`, recording that the manifest it named
    /// changed; `None` when it was not there.
    pub async fn delete_tag(&self, repo: &str, tag: &str) -> Sql<Option<Vec<Change>>> {
        let mut transaction = self.pool.begin().await?;
        let removed =
            sqlx::query("DELETE FROM registry_tags WHERE repo = $1 AND tag = $2 RETURNING digest")
                .bind(repo.to_owned())
                .bind(tag.to_owned())
                .fetch_optional(&mut *transaction)
                .await?;
        let Some(row) = removed else {
            return Ok(None);
        };
        let digest = row.try_get::<String, _>(0)?;
        let changed: Vec<Digest> = Digest::parse(&digest).ok().into_iter().collect();
        let changes = record_changes(&mut transaction, repo, &changed).await?;
        transaction.commit().await?;
        Ok(Some(changes))
    }

    /// The repositories the registry holds anything of, after `after`, at
    /// most `limit` of them, in order.
    pub async fn repositories(&self, after: &str, limit: u32) -> Sql<Vec<String>> {
        let rows = sqlx::query(
            "SELECT repo FROM registry_blobs WHERE repo > $1 UNION \
             SELECT repo FROM registry_manifests WHERE repo > $1 ORDER BY repo LIMIT $2",
        )
        .bind(after.to_owned())
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|row| row.try_get(0)).collect()
    }

    /// Forgets repository `repo` ([`delete_repository`] in a transaction of
    /// its own).
    pub async fn forget_repository(&self, repo: &str) -> Sql<()> {
        let mut transaction = self.pool.begin().await?;
        delete_repository(&mut transaction, repo).await?;
        transaction.commit().await
    }

    /// At most `limit` changes the catalog has yet to hear about.
    pub async fn pending_changes(&self, limit: u32) -> Sql<Vec<Change>> {
        let rows =
            sqlx::query("SELECT repo, digest, seq FROM registry_changes ORDER BY seq LIMIT $1")
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?;
        let mut changes = Vec::with_capacity(rows.len());
        for row in rows {
            if let Ok(digest) = Digest::parse(&row.try_get::<String, _>(1)?) {
                changes.push(Change {
                    repo: row.try_get(0)?,
                    digest,
                    seq: row.try_get(2)?,
                });
            }
        }
        Ok(changes)
    }

    /// Forgets `change` once the catalog heard it, unless the manifest
    /// changed again meanwhile (a later number).
    pub async fn told(&self, change: &Change) -> Sql<()> {
        sqlx::query("DELETE FROM registry_changes WHERE repo = $1 AND digest = $2 AND seq = $3")
            .bind(change.repo.clone())
            .bind(change.digest.as_str().to_owned())
            .bind(change.seq)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// At most `limit` tags of `repo` after `last`, in lexical order.
    pub async fn tags(&self, repo: &str, last: &str, limit: u32) -> Sql<Vec<String>> {
        let rows = sqlx::query(
            "SELECT tag FROM registry_tags WHERE repo = $1 AND tag > $2 ORDER BY tag LIMIT $3",
        )
        .bind(repo.to_owned())
        .bind(last.to_owned())
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|row| row.try_get(0)).collect()
    }

    /// The descriptors of the manifests of `repo` whose subject is
    /// `subject`, of `artifact_type` when given: the first 1,000 by digest.
    pub async fn referrers(
        &self,
        repo: &str,
        subject: &Digest,
        artifact_type: Option<&str>,
    ) -> Sql<Vec<Value>> {
        let rows = sqlx::query(
            "SELECT digest, media_type, size, artifact_type, annotations FROM registry_manifests \
             WHERE repo = $1 AND subject = $2 ORDER BY digest LIMIT 1000",
        )
        .bind(repo.to_owned())
        .bind(subject.as_str().to_owned())
        .fetch_all(&self.pool)
        .await?;
        let mut descriptors = Vec::new();
        for row in rows {
            let kind: String = row.try_get(3)?;
            if artifact_type.is_some_and(|wanted| wanted != kind) {
                continue;
            }
            let mut descriptor = serde_json::json!({
                "mediaType": row.try_get::<String, _>(1)?,
                "digest": row.try_get::<String, _>(0)?,
                "size": row.try_get::<i64, _>(2)?,
            });
            if !kind.is_empty() {
                descriptor["artifactType"] = kind.into();
            }
            let annotations: String = row.try_get(4)?;
            if let Ok(annotations @ Value::Object(_)) = serde_json::from_str(&annotations) {
                descriptor["annotations"] = annotations;
            }
            descriptors.push(descriptor);
        }
        Ok(descriptors)
    }

    /// Records upload `id` into `repo`.
    pub async fn create_upload(&self, id: &str, repo: &str) -> Sql<()> {
        sqlx::query("INSERT INTO registry_uploads (id, repo, created) VALUES ($1, $2, $3)")
            .bind(id.to_owned())
            .bind(repo.to_owned())
            .bind(protoapi_core::time::now_micros())
            .execute(&self.pool)
            .await
            .map(drop)
    }

    /// The repository of upload `id` and when it started.
    pub async fn upload(&self, id: &str) -> Sql<Option<(String, i64)>> {
        let row = sqlx::query("SELECT repo, created FROM registry_uploads WHERE id = $1")
            .bind(id.to_owned())
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
            .transpose()
    }

    /// Forgets upload `id`.
    pub async fn delete_upload(&self, id: &str) -> Sql<()> {
        sqlx::query("DELETE FROM registry_uploads WHERE id = $1")
            .bind(id.to_owned())
            .execute(&self.pool)
            .await
            .map(drop)
    }

    /// Uploads started before `before` (microseconds), at most 100.
    pub async fn uploads_before(&self, before: i64) -> Sql<Vec<String>> {
        let rows = sqlx::query(
            "SELECT id FROM registry_uploads WHERE created < $1 ORDER BY created LIMIT 100",
        )
        .bind(before)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|row| row.try_get(0)).collect()
    }

    /// Forgets the blobs repositories hold that none of their manifests
    /// refers to, linked before `before`; answers how many.
    pub async fn unlink_unreferenced(&self, before: i64) -> Sql<u64> {
        let done = sqlx::query(
            "DELETE FROM registry_blobs WHERE created < $1 AND NOT EXISTS (SELECT 1 FROM \
             registry_references r WHERE r.repo = registry_blobs.repo AND r.target = registry_blobs.digest)",
        )
        .bind(before)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    /// Whether any repository holds `digest`.
    pub async fn held_anywhere(&self, digest: &Digest) -> Sql<bool> {
        let row = sqlx::query("SELECT 1 FROM registry_blobs WHERE digest = $1 LIMIT 1")
            .bind(digest.as_str().to_owned())
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }
}

/// Records in `transaction` that the catalog must hear about `digests` of
/// `repo`, each under a new number.
async fn record_changes(
    transaction: &mut sqlx::Transaction<'_, sqlx::Any>,
    repo: &str,
    digests: &[Digest],
) -> Sql<Vec<Change>> {
    let mut changes = Vec::with_capacity(digests.len());
    for digest in digests {
        let seq = change_number();
        sqlx::query(
            "INSERT INTO registry_changes (repo, digest, seq) VALUES ($1, $2, $3) \
             ON CONFLICT (repo, digest) DO UPDATE SET seq = excluded.seq",
        )
        .bind(repo.to_owned())
        .bind(digest.as_str().to_owned())
        .bind(seq)
        .execute(&mut **transaction)
        .await?;
        changes.push(Change {
            repo: repo.to_owned(),
            digest: digest.clone(),
            seq,
        });
    }
    Ok(changes)
}

/// A number no other change takes: the time in microseconds, in its high
/// bits, and random low bits (replicas change at once).
fn change_number() -> i64 {
    use rand::RngCore as _;
    let micros = protoapi_core::time::now_micros();
    (micros << 10) | i64::from(rand::rng().next_u32() & 0x3ff)
}

/// Deletes, in `connection`'s transaction, the manifests of `repo` whose
/// digests begin `sha256:<prefix>` (an image of the API names its manifest
/// so), with their tags and what they refer to; answers how many manifests.
/// For an application deleting the item that stands for a manifest.
pub async fn delete_manifests_by_prefix(
    connection: &mut sqlx::AnyConnection,
    repo: &str,
    prefix: &str,
) -> Sql<u64> {
    // Digests are lowercase hex: `g` sorts after every one of them.
    let (from, to) = (format!("sha256:{prefix}"), format!("sha256:{prefix}g"));
    let mut manifests = 0;
    for table in [
        "registry_manifests WHERE repo = $1 AND digest >= $2 AND digest < $3",
        "registry_tags WHERE repo = $1 AND digest >= $2 AND digest < $3",
        "registry_references WHERE repo = $1 AND manifest >= $2 AND manifest < $3",
    ] {
        let done = sqlx::query(sqlx::AssertSqlSafe(format!("DELETE FROM {table}")))
            .bind(repo.to_owned())
            .bind(from.clone())
            .bind(to.clone())
            .execute(&mut *connection)
            .await?;
        if table.starts_with("registry_manifests") {
            manifests = done.rows_affected();
        }
    }
    Ok(manifests)
}

/// Deletes, in `connection`'s transaction, everything the registry keeps of
/// repository `repo` but its uploads in progress (which expire): for an
/// application deleting the item that stands for the repository.
pub async fn delete_repository(connection: &mut sqlx::AnyConnection, repo: &str) -> Sql<()> {
    for table in [
        "registry_manifests",
        "registry_references",
        "registry_tags",
        "registry_blobs",
        "registry_changes",
    ] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DELETE FROM {table} WHERE repo = $1"
        )))
        .bind(repo.to_owned())
        .execute(&mut *connection)
        .await?;
    }
    Ok(())
}
