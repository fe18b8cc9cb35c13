//! Where a console request may come from and where it may lead: the
//! `Origin` check of every POST, and the `next` a sign-in goes back to.

use http::{HeaderMap, HeaderValue, Uri, header};

use super::paths::PREFIX;

/// `next` when it is a console path, else the console's home: never
/// another site (`//host`, `/\host`) or a path outside the console.
pub(super) fn safe_next(next: &str) -> &str {
    let inside = next.len() <= super::pending::MAX_NEXT
        && next.starts_with(PREFIX)
        && next.bytes().all(|b| b.is_ascii_graphic() && b != b'\\')
        && !next[PREFIX.len()..].starts_with('/');
    if inside { next } else { PREFIX }
}

/// Whether a POST's `Origin`, when sent, is this host: the request's
/// authority, which HTTP/2 sends as `:authority` (the URI's) and HTTP/1.1
/// as `Host`. A request naming neither is not same-origin.
pub(super) fn same_origin(headers: &HeaderMap, uri: &Uri) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let host = match uri.authority() {
        Some(authority) => Some(authority.as_str().as_bytes()),
        None => headers.get(header::HOST).map(HeaderValue::as_bytes),
    };
    match (origin.to_str().ok().and_then(|o| o.split_once("://")), host) {
        (Some((_, authority)), Some(host)) => host == authority.as_bytes(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pending::MAX_NEXT;

    #[test]
    fn the_origin_is_compared_with_the_authority_http_2_sends_as_its_uri() {
        let origin = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ORIGIN, value.parse().unwrap());
            headers
        };
        // HTTP/2: `:authority` is the URI's; there is no `Host`.
        let h2: Uri = "https://api.example:8443/console/signin".parse().unwrap();
        assert!(same_origin(&origin("https://api.example:8443"), &h2));
        assert!(!same_origin(&origin("https://evil.example"), &h2));
        // HTTP/1.1: the path alone, and `Host`.
        let h1: Uri = "/console/signin".parse().unwrap();
        let mut headers = origin("http://api.example");
        assert!(
            !same_origin(&headers, &h1),
            "neither `Host` nor an authority"
        );
        headers.insert(header::HOST, "api.example".parse().unwrap());
        assert!(same_origin(&headers, &h1));
        headers.insert(header::HOST, "evil.example".parse().unwrap());
        assert!(!same_origin(&headers, &h1));
        assert!(
            same_origin(&HeaderMap::new(), &h1),
            "no Origin: not a browser's cross-site post"
        );
    }

    #[test]
    fn sign_in_goes_only_to_console_paths() {
        assert_eq!(
            safe_next("/console/groups?parent=a"),
            "/console/groups?parent=a"
        );
        for hostile in [
            "/console/\u{e9}",
            "/console/a b",
            "/console/a\tb",
            "https://evil.example/",
            "//evil.example/",
            "/console//evil.example",
            "/console/\\evil",
            "/other",
            "",
            "/console",
            &format!("/console/groups?parent={}", "a".repeat(MAX_NEXT)),
        ] {
            assert_eq!(safe_next(hostile), "/console/", "{hostile}");
        }
    }
}
