//! Harness for end-to-end tests: a platform server on a real socket, small
//! REST and gRPC clients for it, callers with tokens of their own, an OIDC
//! issuer, and PostgreSQL databases of their own; [`tls`]: the same over TLS.

pub mod tls;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Buf;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor, MethodDescriptor};
use serde_json::{Value, json};

/// An OIDC issuer of identity tokens (RSA keys, JWKS, RS256 tokens).
pub use protoapi_testing::issuer::Issuer;
use sqlx::Connection;
use tokio::io::AsyncReadExt;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

pub use http::{Method, StatusCode};

/// A running server. Dropping it without [`TestServer::stop`] aborts it.
pub struct TestServer {
    pub address: SocketAddr,
    pub data_dir: PathBuf,
    /// The platform administrator's token (`admin.token`).
    pub admin_token: String,
    /// Where its signing keys are kept (see [`platform_server::Config::keys_dir`]).
    keys_dir: PathBuf,
    /// The audience of its tokens.
    base_url: String,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

/// A caller other than the administrator: an identity bound to a role, and
/// its API token.
pub struct Member {
    pub identity: String,
    /// The role binding that grants it the role.
    pub binding: String,
    pub token: String,
    /// A REST client sending the token.
    pub rest: Rest,
}

impl TestServer {
    /// Starts a server on an ephemeral port over the embedded database in `data_dir`.
    pub async fn start(data_dir: &Path) -> TestServer {
        Self::start_with(Self::config(data_dir)).await
    }

    /// The configuration [`TestServer::start`] uses.
    pub fn config(data_dir: &Path) -> platform_server::Config {
        platform_server::Config {
            data_dir: data_dir.to_owned(),
            database_url: std::env::var("E2E_DATABASE_URL").ok(),
            ..Default::default()
        }
    }

    /// Starts a server in a new temporary directory, with the configuration
    /// of [`TestServer::start`] as `edit` changes it. Keep the directory
    /// while the server runs.
    pub async fn start_configured(
        edit: impl FnOnce(&mut platform_server::Config),
    ) -> (TestServer, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Self::config(dir.path());
        edit(&mut config);
        (Self::start_with(config).await, dir)
    }

    /// Starts a server on `dir/data` that accepts the identity tokens
    /// `keys` signs for `issuer` (its JWKS written to `dir`).
    pub async fn start_trusting(dir: &Path, issuer: &str, keys: &Issuer) -> TestServer {
        let jwks = dir.join("issuer.jwks.json");
        std::fs::write(&jwks, keys.jwks.to_string()).unwrap();
        let mut config = Self::config(&dir.join("data"));
        config.trusted_issuers = vec![(issuer.to_owned(), jwks)];
        Self::start_with(config).await
    }

    pub async fn start_with(config: platform_server::Config) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (shutdown, stopped) = oneshot::channel::<()>();
        let data_dir = config.data_dir.clone();
        let keys_dir = config.keys_dir().to_owned();
        let base_url = config
            .base_url
            .clone()
            .unwrap_or_else(|| format!("http://{address}"));
        let task = tokio::spawn(async move {
            platform_server::serve(config, listener, async {
                stopped.await.ok();
            })
            .await
            .expect("the server runs until shut down");
        });
        let mut server = TestServer {
            address,
            data_dir,
            admin_token: String::new(),
            keys_dir,
            base_url,
            shutdown: Some(shutdown),
            task: Some(task),
        };
        server.wait_ready().await;
        server
    }

    /// Waits until the server answers with the admin token it wrote.
    async fn wait_ready(&mut self) {
        let path = self
            .data_dir
            .join(platform_server::bootstrap::ADMIN_TOKEN_FILE);
        for _ in 0..200 {
            if let Ok(token) = std::fs::read_to_string(&path) {
                self.admin_token = token;
                if self.rest().get("/iam/v2/groups?pageSize=1").await.status == StatusCode::OK {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the server did not become ready");
    }

    /// Shuts down gracefully and waits until the database is closed.
    pub async fn stop(mut self) {
        self.shutdown.take().unwrap().send(()).ok();
        self.task.take().unwrap().await.unwrap();
    }

    /// The platform administrator's identity (the subject of its token).
    pub fn admin_identity(&self) -> String {
        let payload = self.admin_token.split('.').nth(1).expect("a JWT");
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).expect("JWT claims");
        claims["sub"].as_str().expect("a subject").to_owned()
    }

    /// The platform's first root organization, where the administrator and
    /// the built-in roles live.
    pub fn platform_root(&self) -> String {
        let admin = self.admin_identity();
        admin.rsplit_once('/').expect("a child uid").0.to_owned()
    }

    /// The uid of a built-in role (`owner`, `editor`, `viewer`), which every
    /// organization may bind.
    pub async fn builtin_role(&self, name: &str) -> String {
        let platform_root = self.platform_root();
        let roles = self
            .rest()
            .get(&format!("/iam/v2/roles?uidp.children_of={platform_root}"))
            .await;
        roles.body["items"]
            .as_array()
            .expect("a list")
            .iter()
            .find(|role| role["name"] == name)
            .and_then(|role| role["uid"].as_str())
            .unwrap_or_else(|| panic!("no built-in role `{name}`"))
            .to_owned()
    }

    /// An API token for `identity`, as `platform-server mint-token` makes
    /// one for this server.
    pub fn token_for(&self, identity: &str) -> String {
        platform_server::mint_token(&self.keys_dir, &self.base_url, identity).unwrap()
    }

    /// A new identity `name` under `parent`, bound to `role` at the group
    /// `at` by the administrator, with its token.
    pub async fn member(&self, parent: &str, name: &str, role: &str, at: &str) -> Member {
        let admin = self.rest();
        let identity = admin
            .create(
                &format!("/iam/v2/identities/{parent}"),
                json!({"name": name}),
            )
            .await;
        let binding = admin
            .create(
                &format!("/iam/v2/roleBindings/{at}"),
                json!({"identity": identity, "role": role}),
            )
            .await;
        let token = self.token_for(&identity);
        Member {
            rest: self.rest_as(Some(&token)),
            identity,
            binding,
            token,
        }
    }

    /// A new identity `name` under `root`, bound there to a new role of its
    /// own (also `name`) holding `capabilities`, with its token.
    pub async fn member_with(
        &self,
        root: &str,
        name: &str,
        capabilities: &[impl AsRef<str>],
    ) -> Member {
        let capabilities: Vec<&str> = capabilities.iter().map(AsRef::as_ref).collect();
        let role = self
            .rest()
            .create(
                &format!("/iam/v2/roles/{root}"),
                json!({"name": name, "capabilities": capabilities}),
            )
            .await;
        self.member(root, name, &role, root).await
    }

    /// A REST client acting as the platform administrator.
    pub fn rest(&self) -> Rest {
        self.rest_as(Some(&self.admin_token))
    }

    /// A REST client sending `token` (none: anonymous).
    pub fn rest_as(&self, token: Option<&str>) -> Rest {
        Rest {
            base: format!("http://{}", self.address),
            client: Client::builder(TokioExecutor::new()).build_http(),
            authorization: token.map(|token| format!("Bearer {token}")),
        }
    }

    /// A gRPC channel (HTTP/2) to the same port.
    pub async fn channel(&self) -> tonic::transport::Channel {
        tonic::transport::Endpoint::from_shared(format!("http://{}", self.address))
            .unwrap()
            .connect()
            .await
            .unwrap()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// A REST response: status and parsed JSON body.
#[derive(Debug)]
pub struct Response {
    pub status: StatusCode,
    pub body: Value,
}

impl Response {
    /// The canonical status name of an error response.
    pub fn error_status(&self) -> &str {
        self.body["error"]["status"].as_str().unwrap_or_default()
    }

    /// Asserts an error answer: its HTTP status and canonical status name
    /// (`INVALID_ARGUMENT`, …); `what` names the case in a failure.
    pub fn assert_error(&self, status: StatusCode, canonical: &str, what: &str) {
        assert_eq!(self.status, status, "{what}: {:?}", self.body);
        assert_eq!(self.error_status(), canonical, "{what}");
    }

    /// Asserts an error answer: its HTTP status and the reason of its
    /// ErrorInfo detail; `what` names the case in a failure.
    pub fn assert_reason(&self, status: StatusCode, reason: &str, what: &str) {
        assert_eq!(self.status, status, "{what}: {:?}", self.body);
        let info = self
            .detail("ErrorInfo")
            .unwrap_or_else(|| panic!("{what}: no ErrorInfo in {:?}", self.body));
        assert_eq!(info["reason"], reason, "{what}");
    }

    /// The error detail with this `@type` suffix (e.g. `ResourceInfo`).
    pub fn detail(&self, type_name: &str) -> Option<&Value> {
        self.body["error"]["details"].as_array()?.iter().find(|d| {
            d["@type"]
                .as_str()
                .is_some_and(|t| t.ends_with(&format!(".{type_name}")))
        })
    }
}

/// A JSON-over-HTTP/1.1 client for one server.
#[derive(Clone)]
pub struct Rest {
    base: String,
    client: Client<hyper_util::client::legacy::connect::HttpConnector, Full<bytes::Bytes>>,
    /// The `Authorization` header sent, if any.
    pub authorization: Option<String>,
}

impl Rest {
    pub async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Response {
        let body = body
            .map(|b| serde_json::to_vec(b).unwrap())
            .unwrap_or_default();
        self.raw(method, path, "application/json", body).await
    }

    /// Sends raw bytes with a content type.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Response {
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header(http::header::CONTENT_TYPE, content_type);
        if let Some(authorization) = &self.authorization {
            request = request.header(http::header::AUTHORIZATION, authorization);
        }
        let request = request.body(Full::new(bytes::Bytes::from(body))).unwrap();
        let response = self
            .client
            .request(request)
            .await
            .expect("the server answers");
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("non-JSON response ({status}): {e}: {bytes:?}"))
        };
        Response { status, body }
    }

    /// A GET and the size of its body as sent.
    pub async fn get_sized(&self, path: &str) -> (usize, Response) {
        let mut request = http::Request::builder().uri(format!("{}{path}", self.base));
        if let Some(authorization) = &self.authorization {
            request = request.header(http::header::AUTHORIZATION, authorization);
        }
        let request = request.body(Full::new(bytes::Bytes::new())).unwrap();
        let response = self
            .client
            .request(request)
            .await
            .expect("the server answers");
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = serde_json::from_slice(&bytes).expect("a JSON body");
        (bytes.len(), Response { status, body })
    }

    pub async fn get(&self, path: &str) -> Response {
        self.call(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Response {
        self.call(Method::POST, path, Some(&body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> Response {
        self.call(Method::PATCH, path, Some(&body)).await
    }

    /// POSTs a create and returns the new uid, failing the test on an error.
    pub async fn create(&self, path: &str, body: Value) -> String {
        let response = self.post(path, body).await;
        assert_eq!(
            response.status,
            StatusCode::OK,
            "create at {path}: {:?}",
            response.body
        );
        response.body["uid"]
            .as_str()
            .expect("created resources have a uid")
            .to_owned()
    }

    pub async fn delete(&self, path: &str) -> Response {
        self.call(Method::DELETE, path, None).await
    }
}

/// A gRPC interceptor sending `token` as the bearer token.
pub fn bearer(token: &str) -> impl tonic::service::Interceptor + Clone + use<> {
    let value: tonic::metadata::MetadataValue<_> = format!("Bearer {token}").parse().unwrap();
    move |mut request: tonic::Request<()>| {
        request
            .metadata_mut()
            .insert("authorization", value.clone());
        Ok(request)
    }
}

/// Reads until the server closes the connection (end of stream or reset);
/// returns what arrived. Fails when that takes longer than `bound`.
pub async fn read_until_closed(stream: &mut tokio::net::TcpStream, bound: Duration) -> Vec<u8> {
    let mut received = Vec::new();
    let read = async {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(bound, read)
        .await
        .expect("the server closes the connection");
    received
}

/// Whether `uid` is a root UIDP, or a child UIDP of `parent`.
pub fn is_child_uid(uid: &str, parent: Option<&str>) -> bool {
    let hex = |s: &str, n: usize| {
        s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    match parent {
        None => hex(uid, 40),
        Some(parent) => uid
            .strip_prefix(parent)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|segment| hex(segment, 16)),
    }
}

/// A unary call with a request given as JSON.
pub async fn call(
    channel: &tonic::transport::Channel,
    token: Option<&str>,
    method: &MethodDescriptor,
    json: &str,
) -> Result<DynamicMessage, tonic::Status> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let request = DynamicMessage::deserialize(method.input(), &mut deserializer).unwrap();
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.unwrap();
    let path = format!("/{}/{}", method.parent_service().full_name(), method.name());
    let mut request = tonic::Request::new(request);
    if let Some(token) = token {
        let value = format!("Bearer {token}").parse().unwrap();
        request.metadata_mut().insert("authorization", value);
    }
    grpc.unary(
        request,
        path.parse().unwrap(),
        DynamicCodec(method.output()),
    )
    .await
    .map(tonic::Response::into_inner)
}

/// A codec for messages known only by their descriptors.
struct DynamicCodec(MessageDescriptor);

impl Codec for DynamicCodec {
    type Encode = DynamicMessage;
    type Decode = DynamicMessage;
    type Encoder = DynamicCodec;
    type Decoder = DynamicCodec;

    fn encoder(&mut self) -> Self::Encoder {
        DynamicCodec(self.0.clone())
    }

    fn decoder(&mut self) -> Self::Decoder {
        DynamicCodec(self.0.clone())
    }
}

impl Encoder for DynamicCodec {
    type Item = DynamicMessage;
    type Error = tonic::Status;

    fn encode(
        &mut self,
        item: DynamicMessage,
        dst: &mut EncodeBuf<'_>,
    ) -> Result<(), tonic::Status> {
        item.encode(dst)
            .map_err(|e| tonic::Status::internal(e.to_string()))
    }
}

impl Decoder for DynamicCodec {
    type Item = DynamicMessage;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<DynamicMessage>, tonic::Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        DynamicMessage::decode(self.0.clone(), bytes)
            .map(Some)
            .map_err(|e| tonic::Status::internal(e.to_string()))
    }
}

/// A PostgreSQL database of its own for one test, on the server that
/// `E2E_DATABASE_URL` names, dropped when the test ends.
pub struct PgDatabase {
    name: String,
    /// Its URL: the server URL's, naming this database.
    pub url: String,
    server_url: String,
}

impl PgDatabase {
    /// Creates a database with a fresh name on the server `server_url` names
    /// (the role needs CREATEDB).
    pub async fn create(server_url: &str) -> PgDatabase {
        sqlx::any::install_default_drivers();
        let name = format!(
            "platform_test_{}",
            &protoapi_runtime::uidp::new_root()[..16]
        );
        let mut connection = sqlx::AnyConnection::connect(server_url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut connection)
            .await
            .unwrap_or_else(|e| {
                panic!("cannot create a test database (the role needs CREATEDB): {e}")
            });
        connection.close().await.ok();
        let (address, query) = match server_url.split_once('?') {
            Some((address, query)) => (address, format!("?{query}")),
            None => (server_url, String::new()),
        };
        let (server, _) = address
            .rsplit_once('/')
            .expect("E2E_DATABASE_URL names a database");
        PgDatabase {
            url: format!("{server}/{name}{query}"),
            name,
            server_url: server_url.to_owned(),
        }
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        let server_url = self.server_url.clone();
        // A thread of its own: `drop` may run inside the test's runtime.
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                if let Ok(mut connection) = sqlx::AnyConnection::connect(&server_url).await {
                    sqlx::query(sqlx::AssertSqlSafe(sql))
                        .execute(&mut connection)
                        .await
                        .ok();
                }
            });
        })
        .join()
        .ok();
    }
}
