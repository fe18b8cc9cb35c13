//! The server with hand-written REST handlers beside the generated ones: the
//! baseline of `scripts/bench.sh`.
//!
//! ```text
//! cargo run --release -p platform-server --example baseline -- --data-dir ./data --listen 127.0.0.1:8080
//! ```
//!
//! `GET /baseline/groups/{uid}` and `GET /baseline/groups?uidp.childrenOf=…&pageSize=…&pageToken=…`
//! answer what `GET /iam/v2/groups/{uid}` and `GET /iam/v2/groups?…` answer, written the way one
//! would write them by hand with axum and serde: typed extractors, `#[derive(Serialize)]` response
//! types. They do the same work as the generated routes, and nothing less: they sit behind the same
//! middleware (authentication, panic and gRPC error handling: `platform_server::serve_with`), ask
//! the same authorizer (grants cache included), read the same `SqlStore` through the generated
//! `GroupStore` trait, page with the runtime's `ListPlan` (validation, list scope, signed keyset
//! page tokens, byte budget) and answer canonical proto3 JSON with the same fields. What differs is
//! only what is generated on the other side: request decoding (`RestRequest`) and the JSON codec.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::routing::get;
use axum::{Json, Router};
use clap::Parser;
use platform_api::platform::iam::v2::{Group, GroupStore, ResourceLimits};
use platform_server::Shared;
use platform_server::store::SqlStore;
use prost_types::Timestamp;
use protoapi_runtime::auth::Need;
use protoapi_runtime::standard::{self, ApiContext, ListPlan, ListRequest};
use protoapi_runtime::{Caller, Error};
use serde::{Deserialize, Serialize, Serializer};
use tracing_subscriber::EnvFilter;

/// Serves the Platform API with the benchmark's hand-written baseline routes.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Directory for the embedded database, server keys and the admin token.
    #[arg(long, default_value = "./data")]
    data_dir: PathBuf,
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let args = Args::parse();
    let config = platform_server::Config {
        data_dir: args.data_dir,
        ..Default::default()
    };
    let result = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => {
            let shutdown = protoapi_runtime::serve::shutdown_signal();
            platform_server::serve_with(config, listener, shutdown, Some(Box::new(routes))).await
        }
        Err(error) => Err(format!("cannot listen on {}: {error}", args.listen).into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Clone)]
struct Baseline {
    store: Arc<SqlStore>,
    context: ApiContext,
}

fn routes(shared: Shared) -> Router {
    Router::new()
        .route("/baseline/groups", get(list_groups))
        .route("/baseline/groups/{*uid}", get(get_group))
        .with_state(Baseline {
            store: shared.store,
            context: shared.context,
        })
}

/// The `ErrorInfo` domain of the generated group service's errors.
const DOMAIN: &str = "iam.platform";

async fn get_group(
    State(baseline): State<Baseline>,
    caller: Caller,
    Path(uid): Path<String>,
) -> Result<Json<GroupJson>, Error> {
    baseline
        .get(&caller, &uid)
        .await
        .map(|group| Json(group.into()))
        .map_err(|error| error.in_domain(DOMAIN))
}

/// The list parameters the benchmark sends, in either spelling the
/// generated route accepts.
#[derive(Deserialize)]
struct ListParams {
    #[serde(default, rename = "uidp.childrenOf", alias = "uidp.children_of")]
    children_of: String,
    #[serde(default, rename = "pageSize", alias = "page_size")]
    page_size: i32,
    #[serde(default, rename = "pageToken", alias = "page_token")]
    page_token: String,
}

async fn list_groups(
    State(baseline): State<Baseline>,
    caller: Caller,
    Query(params): Query<ListParams>,
) -> Result<Json<ListJson>, Error> {
    baseline
        .list(&caller, &params)
        .await
        .map(Json)
        .map_err(|error| error.in_domain(DOMAIN))
}

impl Baseline {
    async fn get(&self, caller: &Caller, uid: &str) -> Result<Group, Error> {
        let uid = protoapi_runtime::uidp::parse("uid", uid)?;
        self.context
            .authorize(caller, Need::Capability("groups.get"), uid)
            .await?;
        self.store
            .get_group(uid)
            .await
            .map_err(|error| standard::store_error::<Group>(error, uid, ""))?
            .ok_or_else(|| standard::not_found::<Group>(uid))
    }

    async fn list(&self, caller: &Caller, params: &ListParams) -> Result<ListJson, Error> {
        let request = ListRequest {
            children_of: &params.children_of,
            page_size: params.page_size,
            page_token: &params.page_token,
            ..Default::default()
        };
        let plan = ListPlan::new::<Group>(
            &self.context,
            caller,
            Need::Capability("groups.list"),
            request,
        )
        .await?;
        let page = self
            .store
            .list_groups(&plan.query)
            .await
            .map_err(|error| standard::store_error::<Group>(error, "", ""))?;
        let (items, next_page_token, total_count) = plan.finish(&self.context, page);
        Ok(ListJson {
            items: items.into_iter().map(GroupJson::from).collect(),
            next_page_token,
            total_count: i32::try_from(total_count).unwrap_or(i32::MAX),
        })
    }
}

/// `platform.iam.v2.Group` in canonical proto3 JSON: lowerCamelCase names,
/// every scalar written, unset messages left out, RFC 3339 `Z` timestamps.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupJson {
    uid: String,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "rfc3339")]
    create_time: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "rfc3339")]
    update_time: Option<Timestamp>,
    name: String,
    description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_limits: Option<ResourceLimitsJson>,
    verified: bool,
    etag: String,
}

#[derive(Serialize)]
struct ResourceLimitsJson {
    clusters: i32,
    idps: i32,
    repositories: i32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListJson {
    items: Vec<GroupJson>,
    next_page_token: String,
    total_count: i32,
}

impl From<Group> for GroupJson {
    fn from(group: Group) -> Self {
        GroupJson {
            uid: group.uid,
            create_time: group.create_time,
            update_time: group.update_time,
            name: group.name,
            description: group.description,
            resource_limits: group.resource_limits.map(
                |ResourceLimits {
                     clusters,
                     idps,
                     repositories,
                 }| ResourceLimitsJson {
                    clusters,
                    idps,
                    repositories,
                },
            ),
            verified: group.verified,
            etag: group.etag,
        }
    }
}

/// prost's `Display` of a timestamp is RFC 3339 with 0, 3, 6 or 9 fractional
/// digits and `Z`, as canonical JSON spells it.
fn rfc3339<S: Serializer>(time: &Option<Timestamp>, serializer: S) -> Result<S::Ok, S::Error> {
    match time {
        Some(time) => serializer.collect_str(time),
        None => serializer.serialize_none(),
    }
}
