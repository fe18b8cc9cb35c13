//! What every page answers with: a rendered template, a redirect, and the
//! encoding of the links and query strings in them.

use askama::Template;
use axum::response::{Html, IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

use crate::paths::PREFIX;

/// A 303 to `location`, or to the console's home when `location` cannot
/// be a header (never a panic on what a request carried).
pub(super) fn see_other(location: &str) -> Response {
    let location = HeaderValue::from_str(location).unwrap_or(HeaderValue::from_static(PREFIX));
    (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response()
}

/// Renders a page with `status`.
pub(super) fn render(status: StatusCode, page: &impl Template) -> Response {
    match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(error) => {
            tracing::error!(%error, "console page failed to render");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the page failed to render",
            )
                .into_response()
        }
    }
}

/// A query string of the pairs whose value is not empty.
pub(super) fn query_string<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (key, value) in pairs.into_iter().filter(|(_, value)| !value.is_empty()) {
        query.append_pair(key, value);
    }
    query.finish()
}

/// Percent-encodes a query value or key segment.
pub(super) fn encode(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}
