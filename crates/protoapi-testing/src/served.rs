//! A router served on a free local port, for tests that call it over real
//! sockets (REST clients, gRPC channels, browsers).

use axum::Router;

/// Serves `router` on `127.0.0.1` at a port the system picks, in a task of
/// the current runtime, until the test's runtime ends; its base URL
/// (`http://127.0.0.1:<port>`).
pub async fn on_free_port(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free local port");
    let address = listener.local_addr().expect("a bound listener's address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{address}")
}
