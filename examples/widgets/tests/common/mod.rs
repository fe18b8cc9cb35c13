//! What the widgets tests share: serving a built API on a real socket.

/// Serves `app` on a port the kernel picks, in the background; its base URL.
pub async fn on_socket(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}")
}
