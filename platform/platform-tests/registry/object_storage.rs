//! Two replicas of the server on one database with their blobs in one
//! S3-compatible store (`--registry-blobs`; moto's S3 server from PyPI,
//! `pip install "moto[server]"`) act as one registry: an upload started on
//! one is continued and finished on the other, and either serves the image.
//! Without `moto_server` on the `PATH` the test says so and does not run.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode};
use platform_server::registry::ObjectStorage;
use platform_tests::TestServer;

use crate::common::{OCI_MANIFEST, Oci, digest, image_manifest, world_configured};

/// moto's S3 server on a port of its own, stopped when dropped.
struct Moto {
    child: Child,
    endpoint: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

impl Moto {
    /// Starts it with one bucket, `bucket`; `None` when it is not installed.
    async fn start(bucket: &str) -> Option<Moto> {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let client = plain_client();
        for _ in 0..200 {
            let created = client
                .request(
                    http::Request::put(format!("{}/{bucket}", moto.endpoint))
                        .body(http_body_util::Full::new(Bytes::new()))
                        .unwrap(),
                )
                .await;
            if matches!(created, Ok(ref answer) if answer.status().is_success()) {
                return Some(moto);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("moto_server did not start on port {port}");
    }

    fn storage(&self, url: &str) -> ObjectStorage {
        let options = [
            ("aws_endpoint", self.endpoint.as_str()),
            ("aws_allow_http", "true"),
            ("aws_access_key_id", "test"),
            ("aws_secret_access_key", "test"),
            ("aws_region", "us-east-1"),
        ];
        ObjectStorage {
            url: url.to_owned(),
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// The keys the bucket holds under `prefix`.
    async fn keys(&self, bucket: &str, prefix: &str) -> String {
        let answer = plain_client()
            .request(
                http::Request::get(format!(
                    "{}/{bucket}?list-type=2&prefix={prefix}",
                    self.endpoint
                ))
                .body(http_body_util::Full::new(Bytes::new()))
                .unwrap(),
            )
            .await
            .unwrap();
        use http_body_util::BodyExt as _;
        let body = answer.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8_lossy(&body).into_owned()
    }
}

type Plain = hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    http_body_util::Full<Bytes>,
>;

fn plain_client() -> Plain {
    hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build_http()
}

fn moto_found() -> bool {
    Command::new("moto_server")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

#[tokio::test(flavor = "multi_thread")]
async fn replicas_with_blobs_in_object_storage_act_as_one_registry() {
    if !moto_found() {
        eprintln!(
            "note: moto_server is not on the PATH; this test did not run (pip install \"moto[server]\")"
        );
        return;
    }
    let moto = Moto::start("images").await.expect("moto_server starts");
    let storage = moto.storage("s3://images/replicas");
    let shared = storage.clone();
    let world = world_configured(true, move |config| config.registry_blobs = Some(shared)).await;
    // The second replica: the same database, keys and base URL (behind one
    // name, as replicas are), the same object storage.
    let mut config = world.replica_config();
    config.base_url = Some(format!("http://{}", world.server.address));
    config.registry_blobs = Some(storage);
    let other = TestServer::start_with(config).await;
    let (a, b) = (
        world.admin.clone(),
        Oci::new(&other, world.admin.authorization.clone()),
    );
    let repo = &world.private;

    // An upload started on one replica, its chunks sent to both, finished
    // on the other.
    let layer: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    let started = a
        .send(
            Method::POST,
            &format!("/v2/{repo}/blobs/uploads/"),
            &[],
            Bytes::new(),
        )
        .await;
    assert_eq!(started.status, StatusCode::ACCEPTED, "{:?}", started.body);
    let location = started.header("location").to_owned();
    let first = b
        .send(
            Method::PATCH,
            &location,
            &[("content-range", "0-99999")],
            layer[..100_000].to_vec(),
        )
        .await;
    assert_eq!(first.status, StatusCode::ACCEPTED, "{:?}", first.body);
    assert_eq!(first.header("range"), "0-99999");
    let status = a.get(&location).await;
    assert_eq!(
        status.header("range"),
        "0-99999",
        "either replica sees the chunk"
    );
    let second = a
        .send(
            Method::PATCH,
            &location,
            &[("content-range", "100000-299999")],
            layer[100_000..].to_vec(),
        )
        .await;
    assert_eq!(second.status, StatusCode::ACCEPTED, "{:?}", second.body);
    let layer_digest = digest(&layer);
    let finished = b
        .send(
            Method::PUT,
            &format!("{location}?digest={layer_digest}"),
            &[],
            Bytes::new(),
        )
        .await;
    assert_eq!(finished.status, StatusCode::CREATED, "{:?}", finished.body);

    let config = b"{\"architecture\":\"amd64\"}";
    let config_digest = b.push_blob(repo, config).await;
    let manifest = image_manifest(
        (&config_digest, config.len()),
        [(layer_digest.as_str(), layer.len())].into_iter(),
        None,
    );
    let put = a.put_manifest(repo, "v1", OCI_MANIFEST, &manifest).await;
    assert_eq!(put.status, StatusCode::CREATED, "{:?}", put.body);

    for (replica, oci) in [("first", &a), ("second", &b)] {
        let pulled = oci.get(&format!("/v2/{repo}/manifests/v1")).await;
        assert_eq!(pulled.body.as_ref(), manifest.as_slice(), "{replica}");
        let blob = oci.get(&format!("/v2/{repo}/blobs/{layer_digest}")).await;
        assert_eq!(blob.status, StatusCode::OK, "{replica}");
        assert_eq!(blob.body.as_ref(), layer.as_slice(), "{replica}");
        let range = oci
            .send(
                Method::GET,
                &format!("/v2/{repo}/blobs/{layer_digest}"),
                &[("range", "bytes=299990-")],
                Bytes::new(),
            )
            .await;
        assert_eq!(range.status, StatusCode::PARTIAL_CONTENT, "{replica}");
        assert_eq!(range.body.as_ref(), &layer[299_990..], "{replica}");
    }

    // The bytes are in the bucket, under the prefix, and on neither disk;
    // no upload is left behind.
    let keys = moto.keys("images", "replicas/").await;
    let hex = layer_digest.trim_start_matches("sha256:");
    assert!(
        keys.contains(&format!("replicas/blobs/sha256/{hex}")),
        "{keys}"
    );
    assert!(!keys.contains("replicas/uploads/"), "{keys}");
    let on_disk = world
        .server
        .data_dir
        .join("registry/blobs/sha256")
        .join(&hex[..2]);
    assert!(!on_disk.exists(), "{}", on_disk.display());
    other.stop().await;
}
