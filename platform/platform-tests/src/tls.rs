//! TLS fixtures: a test certificate authority, server certificates it
//! issues, and the platform server serving over TLS on a real socket.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use protoapi_runtime::tls::CertFiles;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A certificate authority made for one test.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A server certificate and its key, PEM.
pub struct Issued {
    pub cert_pem: String,
    pub key_pem: String,
    /// The certificate, as a server presents it.
    pub der: CertificateDer<'static>,
}

impl TestCa {
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        TestCa { issuer }
    }

    /// The CA certificate, PEM: what a client is given to trust.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// Writes the CA certificate to `dir/ca.pem` and returns its path.
    pub fn write(&self, dir: &Path) -> PathBuf {
        let path = dir.join("ca.pem");
        std::fs::write(&path, self.pem()).unwrap();
        path
    }

    /// A new server certificate for `localhost` and `127.0.0.1`.
    pub fn issue(&self) -> Issued {
        let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let mut params = CertificateParams::new(names).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            der: cert.der().clone(),
        }
    }
}

impl Issued {
    /// Writes the pair to `files` (each replaced by a rename, so a server
    /// never reads half a file).
    pub fn write(&self, files: &CertFiles) {
        for (path, text) in [(&files.cert, &self.cert_pem), (&files.key, &self.key_pem)] {
            let partial = path.with_extension("partial");
            std::fs::write(&partial, text).unwrap();
            std::fs::rename(&partial, path).unwrap();
        }
    }
}

/// The platform server over TLS. Dropping it without [`TlsServer::stop`] aborts it.
pub struct TlsServer {
    pub address: SocketAddr,
    /// `https://localhost:<port>`: the base URL and the audience of its tokens.
    pub url: String,
    pub admin_token: String,
    /// Where its certificate and key are read from.
    pub files: CertFiles,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl TlsServer {
    /// Starts a server with a certificate `ca` issues, its files and its
    /// data in `dir`, with the configuration [`crate::TestServer::config`]
    /// uses as `edit` changes it.
    pub async fn start(
        dir: &Path,
        ca: &TestCa,
        edit: impl FnOnce(&mut platform_server::Config),
    ) -> TlsServer {
        let files = CertFiles::new(dir.join("server.crt"), dir.join("server.key"));
        ca.issue().write(&files);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let url = format!("https://localhost:{}", address.port());
        let mut config = crate::TestServer::config(&dir.join("data"));
        config.tls = Some(files.clone());
        config.base_url = Some(url.clone());
        edit(&mut config);
        let data_dir = config.data_dir.clone();
        let (shutdown, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            platform_server::serve(config, listener, async {
                stopped.await.ok();
            })
            .await
            .expect("the server runs until shut down");
        });
        let mut server = TlsServer {
            address,
            url,
            admin_token: String::new(),
            files,
            shutdown: Some(shutdown),
            task: Some(task),
        };
        server.wait_ready(&data_dir, ca).await;
        server
    }

    /// Waits until the admin token is written and a TLS handshake succeeds.
    async fn wait_ready(&mut self, data_dir: &Path, ca: &TestCa) {
        let path = data_dir.join(platform_server::bootstrap::ADMIN_TOKEN_FILE);
        for _ in 0..400 {
            if let Ok(token) = std::fs::read_to_string(&path) {
                self.admin_token = token;
                if self.presented(ca).await.is_ok() {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the TLS server did not become ready");
    }

    /// The certificate the server presents to a new connection that
    /// trusts `ca` (the handshake's error if it fails).
    pub async fn presented(&self, ca: &TestCa) -> Result<CertificateDer<'static>, String> {
        let stream = TcpStream::connect(self.address)
            .await
            .map_err(|e| e.to_string())?;
        let connector = tokio_rustls::TlsConnector::from(Arc::new(client_config(ca, &[])));
        let name = ServerName::try_from("localhost").unwrap();
        let tls = connector
            .connect(name, stream)
            .await
            .map_err(|e| e.to_string())?;
        let (_, session) = tls.get_ref();
        session
            .peer_certificates()
            .and_then(|chain| chain.first())
            .map(|cert| cert.clone().into_owned())
            .ok_or_else(|| "no certificate presented".to_owned())
    }

    /// What a generated client is given to trust this server.
    pub fn client_tls(ca: &TestCa) -> protoapi_runtime::client::Tls {
        protoapi_runtime::client::Tls::new()
            .ca_pem(ca.pem().as_bytes())
            .unwrap()
    }

    /// Shuts down gracefully and waits until the database is closed.
    pub async fn stop(mut self) {
        self.shutdown.take().unwrap().send(()).ok();
        self.task.take().unwrap().await.unwrap();
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// A rustls client configuration trusting `ca` and offering `alpn`.
pub fn client_config(ca: &TestCa, alpn: &[&[u8]]) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.issuer.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config
}
