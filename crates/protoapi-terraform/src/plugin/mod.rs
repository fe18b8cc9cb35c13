//! The plugin handshake Terraform starts a provider with: the magic cookie
//! in the environment, a listener on loopback in the port range it gives,
//! and, when Terraform passes its client certificate, TLS both ways (the
//! server's own certificate is made at start and named in the handshake
//! line on standard output, the only line the plugin writes there). The
//! plugin framework's controller lets Terraform stop the plugin as soon as
//! it is done with it.

mod pinned;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use base64::Engine;
use futures_util::StreamExt;
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, pem::PemObject};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tonic::transport::Server;

use crate::proto::plugin::Empty;
use crate::proto::plugin::grpc_controller_server::{GrpcController, GrpcControllerServer};
use crate::proto::provider_server::ProviderServer;
use crate::provider::Provider;

/// The cookie Terraform sets for its plugins, which tells a user who runs
/// the binary by hand what it is.
const COOKIE: (&str, &str) = (
    "TF_PLUGIN_MAGIC_COOKIE",
    "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
);
/// The plugin protocol's own version, and the provider protocol's.
const CORE_VERSION: u32 = 1;
const PROTOCOL_VERSION: &str = "6";

/// Why the plugin cannot start.
pub type Failure = Box<dyn std::error::Error + Send + Sync>;

/// Serves `provider` to the Terraform that started this process, until
/// Terraform closes it.
pub async fn serve(provider: Provider) -> Result<(), Failure> {
    if std::env::var(COOKIE.0).as_deref() != Ok(COOKIE.1) {
        return Err(
            "this program is a Terraform provider: Terraform starts it, with the \
                    provider block of a configuration (see its documentation)"
                .into(),
        );
    }
    let offered = std::env::var("PLUGIN_PROTOCOL_VERSIONS").unwrap_or_default();
    if !offered.split(',').any(|v| v.trim() == PROTOCOL_VERSION) {
        return Err(format!(
            "this provider speaks the plugin protocol {PROTOCOL_VERSION}, and Terraform offers \
             `{offered}`: use Terraform 1.0 or later"
        )
        .into());
    }
    let listener = listen().await?;
    let address = listener.local_addr()?;
    let (_, health) = tonic_health::server::health_reporter();
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let router = Server::builder()
        .add_service(health)
        .add_service(GrpcControllerServer::new(Controller(Mutex::new(Some(
            stop,
        )))))
        .add_service(ProviderServer::new(provider));
    let stopped = async {
        stopped.await.ok();
    };
    match std::env::var("PLUGIN_CLIENT_CERT")
        .ok()
        .filter(|pem| !pem.is_empty())
    {
        Some(client_pem) => {
            let (config, certificate) = tls(&client_pem)?;
            announce(address, Some(&certificate));
            let acceptor = TlsAcceptor::from(Arc::new(config));
            let incoming = tokio_stream(listener).filter_map(move |tcp| {
                let acceptor = acceptor.clone();
                async move {
                    match acceptor.accept(tcp.ok()?).await {
                        Ok(stream) => Some(Ok::<_, std::io::Error>(stream)),
                        Err(e) => {
                            tracing::warn!("refused a connection: {e}");
                            None
                        }
                    }
                }
            });
            router
                .serve_with_incoming_shutdown(incoming, stopped)
                .await?;
        }
        None => {
            announce(address, None);
            router
                .serve_with_incoming_shutdown(tokio_stream(listener), stopped)
                .await?;
        }
    }
    Ok(())
}

/// Stops the plugin when Terraform is done with it.
struct Controller(Mutex<Option<tokio::sync::oneshot::Sender<()>>>);

#[tonic::async_trait]
impl GrpcController for Controller {
    async fn shutdown(
        &self,
        _: tonic::Request<Empty>,
    ) -> Result<tonic::Response<Empty>, tonic::Status> {
        if let Some(stop) = self.0.lock().expect("the stop lock is not poisoned").take() {
            let _ = stop.send(());
        }
        Ok(tonic::Response::new(Empty {}))
    }
}

/// A listener on loopback, on the first free port of the range Terraform
/// gives (any free port without one).
async fn listen() -> Result<TcpListener, Failure> {
    let port = |name: &str, default: u16| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<u16>().ok())
            .unwrap_or(default)
    };
    let (min, max) = (port("PLUGIN_MIN_PORT", 0), port("PLUGIN_MAX_PORT", 0));
    for port in min..=max.max(min) {
        if let Ok(listener) = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await {
            return Ok(listener);
        }
    }
    Err(format!("no free port on 127.0.0.1 between {min} and {max}").into())
}

/// The handshake line: versions, address, protocol, and the server's
/// certificate (DER, base64 without padding).
fn announce(address: SocketAddr, certificate: Option<&CertificateDer<'_>>) {
    let mut line = format!("{CORE_VERSION}|{PROTOCOL_VERSION}|tcp|{address}|grpc");
    if let Some(certificate) = certificate {
        line.push('|');
        line.push_str(&base64::engine::general_purpose::STANDARD_NO_PAD.encode(certificate));
    }
    println!("{line}");
}

/// The server's TLS: a certificate made now for `localhost`, and only the
/// client certificate Terraform named.
fn tls(client_pem: &str) -> Result<(ServerConfig, CertificateDer<'static>), Failure> {
    let client = CertificateDer::from_pem_slice(client_pem.as_bytes())?;
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()])?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "localhost");
    // Terraform trusts the certificate as its own root.
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::DigitalSignature,
        rcgen::KeyUsagePurpose::KeyEncipherment,
        rcgen::KeyUsagePurpose::KeyCertSign,
    ];
    params.extended_key_usages = vec![
        rcgen::ExtendedKeyUsagePurpose::ServerAuth,
        rcgen::ExtendedKeyUsagePurpose::ClientAuth,
    ];
    let key = rcgen::KeyPair::generate()?;
    let certificate = params.self_signed(&key)?.der().clone();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(pinned::Pinned::new(client, provider.clone()));
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![certificate.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok((config, certificate))
}

/// The connections `listener` accepts, as a stream.
fn tokio_stream(
    listener: TcpListener,
) -> impl futures_util::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    futures_util::stream::unfold(listener, |listener| async move {
        let accepted = listener.accept().await.map(|(stream, _)| stream);
        Some((accepted, listener))
    })
}
