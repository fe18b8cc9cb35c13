//! JSON over HTTP to the API, with its error model turned into messages.

use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

pub struct Client {
    pub base_url: String,
    http: HttpClient<HttpConnector, Empty<bytes::Bytes>>,
}

impl Client {
    pub fn new(base_url: &str) -> Self {
        Client {
            base_url: base_url.trim_end_matches('/').to_owned(),
            http: HttpClient::builder(TokioExecutor::new()).build_http(),
        }
    }

    /// GETs `path` with a bearer token; API errors become `STATUS (REASON): message`.
    pub async fn get(&self, path: &str, token: Option<&str>) -> Result<Value, String> {
        let mut request = http::Request::get(format!("{}{path}", self.base_url));
        if let Some(token) = token {
            request = request.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request.body(Empty::new()).map_err(|e| e.to_string())?;
        let response = self
            .http
            .request(request)
            .await
            .map_err(|e| format!("cannot reach {}: {e}", self.base_url))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        let json: Value =
            serde_json::from_slice(&body).map_err(|_| format!("{status}: not a JSON response"))?;
        if status.is_success() {
            return Ok(json);
        }
        let error = &json["error"];
        let reason = error["details"]
            .as_array()
            .into_iter()
            .flatten()
            .find_map(|detail| detail["reason"].as_str())
            .unwrap_or_default();
        Err(format!(
            "{} ({reason}): {}",
            error["status"].as_str().unwrap_or(status.as_str()),
            error["message"].as_str().unwrap_or_default()
        ))
    }
}
