//! A client of a served console for tests (feature `testing`): what a
//! browser without script does, over HTTP/1.1: GETs and form POSTs, with
//! the session cookie kept after sign-in.

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// A page as the console answered it.
#[derive(Debug)]
pub struct Page {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub html: String,
}

impl Page {
    /// Where a redirect leads (empty when none).
    pub fn location(&self) -> &str {
        self.headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    /// The CSRF token of the page's forms.
    pub fn csrf(&self) -> String {
        self.hidden("csrf")
    }

    /// The value of the page's first input named `name` (`name="…"
    /// value="…"`), unescaped.
    pub fn hidden(&self, name: &str) -> String {
        let marker = format!("name=\"{name}\" value=\"");
        let start = self
            .html
            .find(&marker)
            .unwrap_or_else(|| panic!("no input `{name}` in {}", self.html))
            + marker.len();
        unescape(self.html[start..].split('"').next().unwrap_or_default())
    }
}

/// A browser of one console, at `base` (`http://127.0.0.1:8080`).
#[derive(Clone, Debug)]
pub struct Browser {
    base: String,
    client: Client<HttpConnector, Full<Bytes>>,
    /// The session cookie (`console_session=…`), once signed in.
    pub cookie: Option<String>,
}

impl Browser {
    pub fn new(base: impl Into<String>) -> Self {
        Browser {
            base: base.into(),
            client: Client::builder(TokioExecutor::new()).build_http(),
            cookie: None,
        }
    }

    /// Sends `method path`, with a form body when given, and `headers`.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        form: Option<&[(&str, &str)]>,
        headers: &[(&str, &str)],
    ) -> Page {
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let body = match form {
            Some(fields) => {
                request = request.header("content-type", "application/x-www-form-urlencoded");
                form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(fields)
                    .finish()
            }
            None => String::new(),
        };
        let request = request
            .body(Full::new(Bytes::from(body)))
            .expect("a valid request");
        let response = self
            .client
            .request(request)
            .await
            .expect("the server answers");
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("a whole answer")
            .to_bytes();
        Page {
            status,
            headers,
            html: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    pub async fn get(&self, path: &str) -> Page {
        self.send(Method::GET, path, None, &[]).await
    }

    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Page {
        self.send(Method::POST, path, Some(form), &[]).await
    }

    /// Signs in with `token` (empty: none), keeping the session cookie.
    pub async fn sign_in(&mut self, token: &str) -> Page {
        let page = self
            .post(
                "/console/signin",
                &[("token", token), ("next", "/console/")],
            )
            .await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "sign-in: {}", page.html);
        let cookie = page
            .headers
            .get("set-cookie")
            .expect("a session cookie")
            .to_str()
            .expect("ASCII");
        self.cookie = Some(cookie.split(';').next().unwrap_or_default().to_owned());
        page
    }

    /// GETs the form at `path`, then posts `fields` to it with its CSRF
    /// token (and an edit form's etag and original values, as a browser
    /// would send them back).
    pub async fn submit(&self, path: &str, fields: &[(&str, &str)]) -> Page {
        let form = self.get(path).await;
        assert_eq!(form.status, StatusCode::OK, "{path}: {}", form.html);
        let csrf = form.csrf();
        let mut sent: Vec<(String, String)> = vec![("csrf".to_owned(), csrf)];
        for hidden in hidden_inputs(&form.html)
            .into_iter()
            .filter(|(name, _)| name != "csrf")
        {
            sent.push(hidden);
        }
        let originals: Vec<(String, String)> = sent
            .iter()
            .filter_map(|(name, value)| {
                name.strip_prefix("orig.")
                    .map(|field| (field.to_owned(), value.clone()))
            })
            .collect();
        for (field, value) in &originals {
            if !fields.iter().any(|(name, _)| name == field) {
                sent.push((field.clone(), value.clone()));
            }
        }
        sent.extend(fields.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let pairs: Vec<(&str, &str)> = sent.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        self.post(path, &pairs).await
    }
}

/// Every hidden input of a page: `(name, value)`.
fn hidden_inputs(html: &str) -> Vec<(String, String)> {
    html.split("<input type=\"hidden\" name=\"")
        .skip(1)
        .filter_map(|rest| {
            let (name, rest) = rest.split_once('"')?;
            let value = rest.strip_prefix(" value=\"")?.split('"').next()?;
            Some((name.to_owned(), unescape(value)))
        })
        .collect()
}

/// Text as the page's escaping wrote it, read back.
fn unescape(text: &str) -> String {
    [
        ("&#43;", "+"),
        ("&#47;", "/"),
        ("&#61;", "="),
        ("&#34;", "\""),
        ("&#39;", "'"),
        ("&#60;", "<"),
        ("&#62;", ">"),
        ("&#38;", "&"),
    ]
    .iter()
    .fold(text.to_owned(), |text, (escaped, plain)| {
        text.replace(escaped, plain)
    })
}
