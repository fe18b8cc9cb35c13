//! Entity tags as HTTP (RFC 9110 §8.8.3, §13): the `ETag` of a resource's
//! answers and the `If-Match` / `If-None-Match` preconditions of requests.
//!
//! Every resource carries an `etag` field (AIP-154); over REST it is also
//! the strong entity-tag of the resource's representation:
//!
//! - Get, Create and Update answer with `ETag: "<etag>"`, the body's etag
//!   quoted ([`Tagged`]);
//! - on Get, `If-None-Match` naming that tag (weakly compared, or `*`)
//!   answers `304 Not Modified` with no body, and an `If-Match` that does not
//!   name it `412` (`FAILED_PRECONDITION`, `ETAG_PRECONDITION_FAILED`)
//!   ([`Preconditions::answer`]);
//! - on Update and Delete, `If-Match` is the request's etag
//!   ([`RestRequest::if_match`](super::RestRequest::if_match)): a stale one
//!   is `ABORTED` (409) exactly as a stale etag in the body or the query is,
//!   since it is the same check; an etag in the body that names another tag
//!   is `INVALID_ARGUMENT` on that field; `*` asks only that the resource
//!   exists, which these methods require anyway.
//!
//! `If-Match` takes one strong tag or `*`: the update compares one etag
//! inside its transaction, so a list of tags, a weak tag (never equal under
//! the strong comparison `If-Match` uses) or a malformed value is refused
//! with `INVALID_ARGUMENT` (`INVALID_PRECONDITION`) rather than guessed at.
//! Routes without entity tags (views of earlier versions) refuse `If-Match`
//! with `412` ([`RestRequest::without_etags`](super::RestRequest::without_etags)):
//! the precondition cannot be checked, and ignoring it could overwrite a
//! change the client meant to guard against. Every other method (List,
//! Create, custom methods) ignores both headers, as RFC 9110 allows for
//! methods whose answer they do not select.

use axum::extract::FromRequestParts;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};

use protoapi_core::error::{Code, Error};
use protoapi_core::json::{self, JsonMessage};
use protoapi_core::resource::Resource;

/// Most entity-tags an `If-None-Match` list may hold: a header of thousands
/// of tags would cost a comparison each.
pub const MAX_TAGS: usize = 64;

/// What an `If-Match` or `If-None-Match` header asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tags {
    /// `*`: any current representation.
    Any,
    /// The opaque tags listed (without quotes), each with whether it is weak.
    List(Vec<(bool, String)>),
}

/// The conditional headers of a request, read and checked before its handler
/// runs: a malformed header is `INVALID_ARGUMENT` (`INVALID_PRECONDITION`).
/// A request without them costs nothing more.
#[derive(Clone, Debug, Default)]
pub struct Preconditions {
    if_match: Option<Tags>,
    if_none_match: Option<Tags>,
}

impl<S: Send + Sync> FromRequestParts<S> for Preconditions {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Error> {
        Preconditions::from_headers(&parts.headers)
    }
}

impl Preconditions {
    /// Reads `If-Match` and `If-None-Match` from `headers`.
    pub fn from_headers(headers: &HeaderMap) -> Result<Self, Error> {
        let if_match = read(headers, &header::IF_MATCH)?;
        if let Some(Tags::List(tags)) = &if_match
            && !matches!(tags.as_slice(), [(false, _)])
        {
            return Err(invalid(
                &header::IF_MATCH,
                "takes one strong entity-tag (`\"<etag>\"`) or `*`",
            ));
        }
        Ok(Preconditions {
            if_match,
            if_none_match: read(headers, &header::IF_NONE_MATCH)?,
        })
    }

    /// The etag `If-Match` names, if it names one (not for `*`).
    pub fn if_match(&self) -> Option<&str> {
        match &self.if_match {
            Some(Tags::List(tags)) => tags.first().map(|(_, tag)| tag.as_str()),
            _ => None,
        }
    }

    /// Whether the request has an `If-Match` header.
    pub fn has_if_match(&self) -> bool {
        self.if_match.is_some()
    }

    /// The answer to a Get of `item`: `412` when `If-Match` does not name its
    /// etag, `304 Not Modified` when `If-None-Match` does, the item with its
    /// `ETag` otherwise.
    pub fn answer<M: Resource>(&self, item: M) -> Result<Tagged<M>, Error> {
        let etag = item.etag();
        if let Some(tag) = self.if_match()
            && tag != etag
        {
            return Err(Error::new(
                Code::FailedPrecondition,
                "ETAG_PRECONDITION_FAILED",
                "the resource's etag is not the one `If-Match` names; read it again",
            )
            .with_resource(M::TYPE, item.key())
            .with_http_status(StatusCode::PRECONDITION_FAILED));
        }
        let not_modified = match &self.if_none_match {
            None => false,
            Some(Tags::Any) => true,
            // Weak comparison (RFC 9110 §13.1.2): the opaque tags are equal.
            Some(Tags::List(tags)) => tags.iter().any(|(_, tag)| tag == etag),
        };
        Ok(Tagged {
            message: item,
            not_modified,
        })
    }
}

/// The one header named `name`, every line of it read as one list.
fn read(headers: &HeaderMap, name: &HeaderName) -> Result<Option<Tags>, Error> {
    let mut values = headers.get_all(name).iter().peekable();
    if values.peek().is_none() {
        return Ok(None);
    }
    let mut tags = Vec::new();
    for value in values {
        let value = value
            .to_str()
            .map_err(|_| invalid(name, "is not visible ASCII"))?;
        if value.trim() == "*" {
            return Ok(Some(Tags::Any));
        }
        parse_list(value, &mut tags).map_err(|problem| invalid(name, problem))?;
    }
    if tags.is_empty() {
        return Err(invalid(name, "names no entity-tag"));
    }
    Ok(Some(Tags::List(tags)))
}

/// Appends the entity-tags of `#entity-tag` list `value` to `tags`.
fn parse_list(value: &str, tags: &mut Vec<(bool, String)>) -> Result<(), &'static str> {
    let mut rest = value;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return Ok(());
        }
        if tags.len() == MAX_TAGS {
            return Err("names too many entity-tags");
        }
        let weak = rest.starts_with("W/");
        if weak {
            rest = &rest[2..];
        }
        let quoted = rest
            .strip_prefix('"')
            .ok_or("holds a value that is not a quoted entity-tag")?;
        let end = quoted.find('"').ok_or("holds an unterminated entity-tag")?;
        tags.push((weak, quoted[..end].to_owned()));
        rest = quoted[end + 1..].trim_start_matches([' ', '\t']);
        if !rest.is_empty() && !rest.starts_with(',') {
            return Err("holds a value that is not a quoted entity-tag");
        }
    }
}

fn invalid(name: &HeaderName, problem: &str) -> Error {
    Error::new(
        Code::InvalidArgument,
        "INVALID_PRECONDITION",
        format!("the `{name}` header {problem}"),
    )
    .with_metadata("header", name.as_str())
}

/// A resource answered with its `ETag` (`"<etag>"`), or `304 Not Modified`
/// with no body when the request's `If-None-Match` named it
/// ([`Preconditions::answer`]).
#[derive(Debug)]
pub struct Tagged<M> {
    message: M,
    not_modified: bool,
}

impl<M> Tagged<M> {
    /// `message` with its `ETag`, answered in full.
    pub fn new(message: M) -> Self {
        Tagged {
            message,
            not_modified: false,
        }
    }

    /// The resource answered.
    pub fn into_inner(self) -> M {
        self.message
    }
}

/// The `ETag` header value of `etag`: the strong tag `"<etag>"`, none for an
/// empty etag or one that cannot be an entity-tag.
pub fn etag_header(etag: &str) -> Option<HeaderValue> {
    if etag.is_empty()
        || !etag
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x7e).contains(&b))
    {
        return None;
    }
    let mut quoted = String::with_capacity(etag.len() + 2);
    quoted.push('"');
    quoted.push_str(etag);
    quoted.push('"');
    HeaderValue::try_from(quoted).ok()
}

impl<M: Resource + JsonMessage> IntoResponse for Tagged<M> {
    fn into_response(self) -> Response {
        let etag = etag_header(self.message.etag());
        let mut response = if self.not_modified {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                json::to_vec(&self.message),
            )
                .into_response()
        };
        if let Some(etag) = etag {
            response.headers_mut().insert(header::ETAG, etag);
        }
        response
    }
}

/// Preconditions a route without entity tags refuses: `If-Match` (`412`).
pub(super) fn refuse_if_match(preconditions: &Preconditions) -> Option<Error> {
    preconditions.has_if_match().then(|| {
        Error::new(
            Code::FailedPrecondition,
            "ETAG_UNSUPPORTED",
            "this route has no entity-tags, so `If-Match` cannot be checked",
        )
        .with_http_status(StatusCode::PRECONDITION_FAILED)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: HeaderName, values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn none_match(values: &[&str]) -> Result<Option<Tags>, Error> {
        read(
            &headers(header::IF_NONE_MATCH, values),
            &header::IF_NONE_MATCH,
        )
    }

    #[test]
    fn lists_of_tags_are_read_per_rfc_9110() {
        assert_eq!(none_match(&[]).unwrap(), None);
        assert_eq!(none_match(&[" * "]).unwrap(), Some(Tags::Any));
        assert_eq!(
            none_match(&["\"a\", W/\"b\"", "\"c\""]).unwrap(),
            Some(Tags::List(vec![
                (false, "a".into()),
                (true, "b".into()),
                (false, "c".into())
            ]))
        );
        assert_eq!(
            none_match(&["\"\""]).unwrap(),
            Some(Tags::List(vec![(false, String::new())]))
        );
        for bad in ["abc", "\"a", "\"a\" \"b\"", ",", "W/a"] {
            let error = none_match(&[bad]).unwrap_err();
            assert_eq!(error.reason(), "INVALID_PRECONDITION", "{bad}");
        }
        let many = vec!["\"x\""; MAX_TAGS + 1].join(",");
        assert!(none_match(&[&many]).is_err());
    }

    #[test]
    fn if_match_takes_one_strong_tag_or_any() {
        let read = |value: &str| Preconditions::from_headers(&headers(header::IF_MATCH, &[value]));
        assert_eq!(read("\"a\"").unwrap().if_match(), Some("a"));
        let any = read("*").unwrap();
        assert!(any.has_if_match() && any.if_match().is_none());
        for refused in ["W/\"a\"", "\"a\", \"b\""] {
            assert_eq!(read(refused).unwrap_err().code(), Code::InvalidArgument);
        }
    }

    #[test]
    fn tags_are_quoted_visible_ascii() {
        assert_eq!(etag_header("AbC-_1").unwrap(), "\"AbC-_1\"");
        assert!(etag_header("").is_none());
        assert!(etag_header("a\"b").is_none());
        assert!(etag_header("a b").is_none());
    }
}
