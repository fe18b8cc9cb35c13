//! The registry beside the Platform API (CONTRACT §10). A repository name is
//! a repo's uid: its owning group's uid and one segment
//! (`<40 hex>/<16 hex>`), so `localhost:8080/<uid>:v1` names tag `v1` of
//! that repo. Pulling needs reading the repo (`repos.get`, or its `public`
//! flag, decided by the generated `GetRepo` itself, as the API decides
//! it); pushing and deleting images need `repos.update` on it. Each
//! manifest is an image of the API (`registry/v2/images`, read only), the
//! repo's child: its uid is the repo's plus the digest's first 16 hex
//! characters.

use std::path::Path;
use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use platform_api::platform::registry::v2::{GetRepoRequest, Image, RepoServiceApi};
use protoapi_runtime::auth::BoxFuture;
use protoapi_runtime::registry::{
    Actions, Catalog, Digest, ObjectBlobs, Registry, Repositories, Storage,
};
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::store::Backend as _;
use protoapi_runtime::{Caller, Code, Error};

use crate::store::SqlStore;

/// The capability pushing and deleting images need on the repo.
const PUSH: &str = "repos.update";

/// Repos as the registry sees them.
pub struct Repos {
    api: RepoServiceApi<SqlStore>,
    context: ApiContext,
}

impl Repos {
    pub fn new(store: Arc<SqlStore>, context: ApiContext) -> Self {
        Repos {
            api: RepoServiceApi::new(store, context.clone()),
            context,
        }
    }

    async fn decide(&self, caller: &Caller, name: &str) -> Result<Actions, Error> {
        if !protoapi_runtime::uidp::is_valid(name) {
            return Ok(Actions::NONE);
        }
        let request = GetRepoRequest {
            uid: name.to_owned(),
        };
        if let Err(error) = self.api.get_repo(caller, request).await {
            return refused(error).map(|()| Actions::NONE);
        }
        let write = match self.context.authorizer.check(caller, PUSH, name).await {
            Ok(()) => true,
            Err(error) => refused(error).map(|()| false)?,
        };
        Ok(Actions {
            pull: true,
            push: write,
            delete: write,
        })
    }
}

/// `Ok` for an error that refuses (a missing repo, a denial, no token), so
/// that every refusal answers alike; the error itself when deciding failed.
fn refused(error: Error) -> Result<(), Error> {
    match error.code() {
        Code::NotFound | Code::PermissionDenied | Code::Unauthenticated | Code::InvalidArgument => {
            Ok(())
        }
        _ => Err(error),
    }
}

impl Repositories for Repos {
    fn actions<'a>(
        &'a self,
        caller: &'a Caller,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Actions, Error>> {
        Box::pin(self.decide(caller, name))
    }
}

/// The images of the API, written as the registry's manifests change.
pub struct Images {
    store: Arc<SqlStore>,
}

impl Images {
    pub fn new(store: Arc<SqlStore>) -> Self {
        Images { store }
    }

    fn uid(repository: &str, digest: &Digest) -> String {
        format!("{repository}/{}", &digest.hex()[..16])
    }

    async fn put(&self, image: &protoapi_runtime::registry::Image) -> Result<(), Error> {
        let uid = Images::uid(&image.repository, &image.digest);
        let stored = self.store.get::<Image>(&uid).await?;
        let pushed = protoapi_runtime::time::from_micros(image.pushed_micros);
        let tags = image.tags.join(",");
        let item = Image {
            create_time: Some(
                stored
                    .as_ref()
                    .and_then(|s| s.create_time)
                    .unwrap_or(pushed),
            ),
            update_time: Some(protoapi_runtime::time::now()),
            digest: image.digest.to_string(),
            media_type: image.media_type.clone(),
            size_bytes: i64::try_from(image.size).unwrap_or(i64::MAX),
            tags: image.tags.clone(),
            artifact_type: image.artifact_type.clone(),
            subject: image.subject.clone(),
            etag: Digest::of(format!("{}:{tags}", image.digest).as_bytes()).hex()[..16].to_owned(),
            uid,
        };
        if stored.is_some() {
            self.store.delete::<Image>(&item.uid, None).await?;
        }
        Ok(self.store.insert(&item).await?)
    }

    async fn remove(&self, repository: &str, digest: &Digest) -> Result<(), Error> {
        let uid = Images::uid(repository, digest);
        self.store.delete::<Image>(&uid, None).await?;
        Ok(())
    }
}

impl Catalog for Images {
    fn put<'a>(
        &'a self,
        image: &'a protoapi_runtime::registry::Image,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(Images::put(self, image))
    }

    fn remove<'a>(
        &'a self,
        repository: &'a str,
        digest: &'a Digest,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(Images::remove(self, repository, digest))
    }
}

/// How often a running server collects the registry's garbage, and how old
/// garbage must be.
const COLLECTION_INTERVAL: std::time::Duration = std::time::Duration::from_secs(3600);

/// The registry's upkeep, as long as the server runs: at start and then
/// every hour, it tells the API's images what changes they missed (those of
/// requests that ended before they could, on any replica), and collects
/// garbage (what `platform-server collect-garbage` does once). Replicas may
/// all do it: each removes the blobs of its own disk (or of the object
/// storage they share) that no repository holds.
pub async fn upkeep(registry: Arc<Registry>) {
    let mut interval = tokio::time::interval(COLLECTION_INTERVAL);
    interval.tick().await;
    loop {
        match registry.catch_up().await {
            Ok(0) => {}
            Ok(told) => tracing::info!(told, "the images caught up with the registry"),
            Err(error) => tracing::warn!(%error, "the images could not catch up with the registry"),
        }
        interval.tick().await;
        match registry
            .storage()
            .collect_garbage(COLLECTION_INTERVAL)
            .await
        {
            Ok(collected) => tracing::info!(
                uploads = collected.uploads,
                links = collected.links,
                blobs = collected.blobs,
                "registry garbage collected"
            ),
            Err(error) => tracing::warn!(%error, "registry garbage collection failed"),
        }
    }
}

/// Object storage for the registry's blobs and uploads, which replicas
/// share (`--registry-blobs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectStorage {
    /// `s3://<bucket>[/<prefix>]`.
    pub url: String,
    /// S3 settings besides the `AWS_*` environment variables, by the same
    /// names in lower case (`aws_endpoint`, `aws_allow_http`, …).
    pub options: Vec<(String, String)>,
}

impl ObjectStorage {
    /// The blobs under the URL's prefix in its bucket.
    fn open(&self) -> Result<ObjectBlobs, String> {
        let refused = |why: String| format!("--registry-blobs {}: {why}", self.url);
        let Some((bucket, prefix)) = self
            .url
            .strip_prefix("s3://")
            .map(|rest| rest.split_once('/').unwrap_or((rest, "")))
            .filter(|(bucket, _)| !bucket.is_empty())
        else {
            return Err(refused("expected s3://<bucket>[/<prefix>]".into()));
        };
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        for (key, value) in &self.options {
            let key = key.parse().map_err(|e| refused(format!("{e}")))?;
            builder = builder.with_config(key, value);
        }
        let store = builder.build().map_err(|e| refused(e.to_string()))?;
        Ok(ObjectBlobs::new(
            Arc::new(store),
            prefix.trim_end_matches('/'),
        ))
    }
}

/// The registry's storage: its tables in the API's database; blobs and
/// uploads in `objects` when given, else under `data_dir/registry`.
pub fn storage(
    store: &SqlStore,
    data_dir: &Path,
    objects: Option<&ObjectStorage>,
) -> Result<Storage, String> {
    let pool = store.pool().clone();
    match objects {
        Some(objects) => Ok(Storage::new(pool, Arc::new(objects.open()?))),
        None => Storage::on_disk(pool, &data_dir.join("registry"))
            .map_err(|e| format!("cannot open the registry's blobs: {e}")),
    }
}
