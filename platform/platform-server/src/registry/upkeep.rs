//! What a running server does for the registry now and again.

use std::sync::Arc;

use protoapi_runtime::registry::Registry;

/// How often a running server collects the registry's garbage, and how old
/// garbage must be.
const COLLECTION_INTERVAL: std::time::Duration = std::time::Duration::from_secs(3600);

/// The registry's upkeep, as long as the server runs: at start and then
/// every hour, it tells the API's images what changes they missed (those of
/// requests that ended before they could, on any replica) and forgets what
/// it keeps of repos deleted while a push to them was in progress; every
/// hour, it collects garbage (what `platform-server collect-garbage` does once). Replicas may
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
        match registry.forget_missing().await {
            Ok(0) => {}
            Ok(forgotten) => tracing::info!(forgotten, "the registry forgot deleted repos"),
            Err(error) => tracing::warn!(%error, "the registry could not forget deleted repos"),
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
