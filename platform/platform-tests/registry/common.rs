//! A registry client speaking plain HTTP, and images to push.

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use platform_tests::TestServer;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";

/// An answer of the registry.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    /// The first error's code (the spec's error format).
    pub fn code(&self) -> String {
        self.json()["errors"][0]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", |v| v.to_str().unwrap())
    }

    /// Asserts the status and the spec's error code.
    pub fn assert_error(&self, status: StatusCode, code: &str, what: &str) {
        assert_eq!(
            (self.status, self.code().as_str()),
            (status, code),
            "{what}: {:?}",
            self.body
        );
    }
}

/// A client of one server's registry, sending `authorization` (a whole
/// header value) when set.
#[derive(Clone)]
pub struct Oci {
    base: String,
    client: Client<HttpConnector, Full<Bytes>>,
    pub authorization: Option<String>,
}

impl Oci {
    pub fn new(server: &TestServer, authorization: Option<String>) -> Oci {
        Oci {
            base: format!("http://{}", server.address),
            client: Client::builder(TokioExecutor::new()).build_http(),
            authorization,
        }
    }

    /// The same client with another `Authorization` header.
    pub fn as_(&self, authorization: Option<String>) -> Oci {
        Oci {
            authorization,
            ..self.clone()
        }
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Answer {
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if let Some(authorization) = &self.authorization {
            request = request.header(http::header::AUTHORIZATION, authorization);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = self
            .client
            .request(request.body(Full::new(body.into())).unwrap())
            .await
            .expect("the server answers");
        let (parts, body) = response.into_parts();
        Answer {
            status: parts.status,
            headers: parts.headers,
            body: body.collect().await.unwrap().to_bytes(),
        }
    }

    pub async fn get(&self, path: &str) -> Answer {
        self.send(Method::GET, path, &[], Bytes::new()).await
    }

    /// A registry token from the token endpoint for `scope`, presenting
    /// this client's credentials.
    pub async fn token(&self, scope: &str) -> Answer {
        self.get(&format!("/v2/token?service=registry&scope={scope}"))
            .await
    }

    /// Pushes `bytes` as one blob of `repo` (monolithic), answering its digest.
    pub async fn push_blob(&self, repo: &str, bytes: &[u8]) -> String {
        let digest = digest(bytes);
        let answer = self
            .send(
                Method::POST,
                &format!("/v2/{repo}/blobs/uploads/?digest={digest}"),
                &[("content-type", "application/octet-stream")],
                bytes.to_vec(),
            )
            .await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        digest
    }

    /// Puts `manifest` at `reference` of `repo`.
    pub async fn put_manifest(
        &self,
        repo: &str,
        reference: &str,
        media_type: &str,
        manifest: &[u8],
    ) -> Answer {
        self.send(
            Method::PUT,
            &format!("/v2/{repo}/manifests/{reference}"),
            &[("content-type", media_type)],
            manifest.to_vec(),
        )
        .await
    }

    /// Pushes an image of a config and `layers` to `repo` at `tag`.
    pub async fn push_image(
        &self,
        repo: &str,
        tag: &str,
        config: &[u8],
        layers: &[&[u8]],
    ) -> Image {
        let config_digest = self.push_blob(repo, config).await;
        let mut layer_digests = Vec::new();
        for layer in layers {
            layer_digests.push(self.push_blob(repo, layer).await);
        }
        let manifest = image_manifest(
            (&config_digest, config.len()),
            layers
                .iter()
                .zip(&layer_digests)
                .map(|(l, d)| (d.as_str(), l.len())),
            None,
        );
        let answer = self.put_manifest(repo, tag, OCI_MANIFEST, &manifest).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        Image {
            digest: digest(&manifest),
            manifest,
            config: config_digest,
            layers: layer_digests,
        }
    }
}

/// An image pushed.
pub struct Image {
    pub digest: String,
    pub manifest: Vec<u8>,
    pub config: String,
    pub layers: Vec<String>,
}

pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    format!(
        "sha256:{}",
        hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// An OCI image manifest of a config and layers (digest, size), with an
/// optional subject (digest, size) and artifact type.
pub fn image_manifest<'a>(
    config: (&str, usize),
    layers: impl Iterator<Item = (&'a str, usize)>,
    subject: Option<(&str, usize, &str)>,
) -> Vec<u8> {
    let layers: Vec<Value> = layers
        .map(|(digest, size)| json!({"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": digest, "size": size}))
        .collect();
    let mut manifest = json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config.0, "size": config.1},
        "layers": layers,
    });
    if let Some((digest, size, artifact_type)) = subject {
        manifest["subject"] = json!({"mediaType": OCI_MANIFEST, "digest": digest, "size": size});
        manifest["artifactType"] = json!(artifact_type);
        manifest["annotations"] = json!({"org.example.kind": artifact_type});
    }
    serde_json::to_vec(&manifest).unwrap()
}

/// A server with a private repo and a public one in an organization of
/// their own, and a client sending the administrator's API token.
pub struct World {
    pub server: TestServer,
    pub _dir: tempfile::TempDir,
    /// A PostgreSQL database of the world's own, when asked for.
    pub database: Option<platform_tests::PgDatabase>,
    pub org: String,
    pub private: String,
    pub public: String,
    pub admin: Oci,
}

impl World {
    /// The server's storage, opened beside it (its database).
    pub async fn store(&self) -> platform_server::store::SqlStore {
        match &self.database {
            Some(database) => platform_server::store::open_postgres(&database.url).await,
            None => platform_server::store::open_sqlite(&self.server.data_dir).await,
        }
        .unwrap()
    }

    /// The configuration of another server on the world's data dir and
    /// database.
    pub fn replica_config(&self) -> platform_server::Config {
        let mut config = TestServer::config(&self.server.data_dir);
        if let Some(database) = &self.database {
            config.database_url = Some(database.url.clone());
        }
        config
    }

    /// The same world after its server stopped and started again.
    pub async fn restart(mut self) -> World {
        let config = self.replica_config();
        self.server.stop().await;
        self.server = TestServer::start_with(config).await;
        self
    }
}

/// What `probe` answers once `done` holds of it, or after five seconds.
pub async fn eventually<T, F: Future<Output = T>>(
    mut probe: impl FnMut() -> F,
    done: impl Fn(&T) -> bool,
) -> T {
    for _ in 0..100 {
        let value = probe().await;
        if done(&value) {
            return value;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    probe().await
}

pub async fn world() -> World {
    world_apart(false).await
}

/// A world whose server has a PostgreSQL database of its own when the
/// tests run on PostgreSQL (`apart`), for a test that acts on everything
/// its database holds.
pub async fn world_apart(apart: bool) -> World {
    world_configured(apart, |_| {}).await
}

/// [`world_apart`], its server's configuration as `edit` changes it.
pub async fn world_configured(
    apart: bool,
    edit: impl FnOnce(&mut platform_server::Config),
) -> World {
    let database = match std::env::var("E2E_DATABASE_URL") {
        Ok(url) if apart => Some(platform_tests::PgDatabase::create(&url).await),
        _ => None,
    };
    let url = database.as_ref().map(|database| database.url.clone());
    let (server, dir) = TestServer::start_configured(|config| {
        if url.is_some() {
            config.database_url = url;
        }
        edit(config);
    })
    .await;
    let rest = server.rest();
    let org = rest
        .create("/iam/v2/groups/", json!({"name": "images"}))
        .await;
    let private = rest
        .create(
            &format!("/registry/v2/repos/{org}"),
            json!({"name": "private"}),
        )
        .await;
    let public = rest
        .create(
            &format!("/registry/v2/repos/{org}"),
            json!({"name": "public", "public": true}),
        )
        .await;
    let admin = Oci::new(&server, Some(format!("Bearer {}", server.admin_token)));
    World {
        server,
        _dir: dir,
        database,
        org,
        private,
        public,
        admin,
    }
}
