//! Walking a list to its end: AIP-158 pages as a `Stream`.

use std::future::Future;

use futures_util::stream::{self, Stream, TryStreamExt};

use protoapi_core::error::Error;

/// Every page of a list, fetching the next one (the request with
/// `page_token` set to the last answer's `next_page_token`) when the stream
/// is polled past the previous one. Stops after the page without a next
/// token, or after the first error.
///
/// Generated clients call this with their list method as `fetch`:
/// `set_token` writes a request's page token, `next_token` reads a page's.
pub fn pages<Req, Resp, F, Fut>(
    first: Req,
    fetch: F,
    set_token: fn(&mut Req, String),
    next_token: fn(&Resp) -> &str,
) -> impl Stream<Item = Result<Resp, Error>>
where
    F: FnMut(Req) -> Fut,
    Fut: Future<Output = Result<Resp, Error>>,
    Req: Clone,
{
    stream::unfold(Some((first, fetch)), move |state| async move {
        let (request, mut fetch) = state?;
        match fetch(request.clone()).await {
            Ok(page) => {
                let token = next_token(&page);
                let next = (!token.is_empty()).then(|| {
                    let mut request = request;
                    set_token(&mut request, token.to_owned());
                    (request, fetch)
                });
                Some((Ok(page), next))
            }
            Err(error) => Some((Err(error), None)),
        }
    })
}

/// Every item of a list, page after page (see [`pages`]); `items` takes a
/// page's items out of it.
pub fn items<Req, Resp, Item, F, Fut>(
    first: Req,
    fetch: F,
    set_token: fn(&mut Req, String),
    next_token: fn(&Resp) -> &str,
    items: fn(Resp) -> Vec<Item>,
) -> impl Stream<Item = Result<Item, Error>>
where
    F: FnMut(Req) -> Fut,
    Fut: Future<Output = Result<Resp, Error>>,
    Req: Clone,
{
    pages(first, fetch, set_token, next_token)
        .map_ok(move |page| stream::iter(items(page).into_iter().map(Ok)))
        .try_flatten()
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    #[derive(Clone, Debug, Default)]
    struct Request {
        page_token: String,
    }

    struct Page {
        items: Vec<u32>,
        next_page_token: String,
    }

    /// Three pages of two items, tokens "1" and "2" between them.
    async fn fetch(request: Request) -> Result<Page, Error> {
        let page: u32 = request.page_token.parse().unwrap_or(0);
        if page > 2 {
            return Err(Error::invalid_field("page_token", "no such page"));
        }
        Ok(Page {
            items: vec![page * 2, page * 2 + 1],
            next_page_token: if page < 2 {
                (page + 1).to_string()
            } else {
                String::new()
            },
        })
    }

    #[tokio::test]
    async fn items_walk_every_page_to_the_end() {
        let all: Vec<u32> = items(
            Request::default(),
            fetch,
            |r, t| r.page_token = t,
            |p: &Page| &p.next_page_token,
            |p| p.items,
        )
        .try_collect()
        .await
        .unwrap();
        assert_eq!(all, [0, 1, 2, 3, 4, 5]);
    }

    #[tokio::test]
    async fn a_failed_page_ends_the_stream_with_its_error() {
        let first = Request {
            page_token: "3".into(),
        };
        let results: Vec<_> = pages(
            first,
            fetch,
            |r, t| r.page_token = t,
            |p: &Page| &p.next_page_token,
        )
        .collect()
        .await;
        assert_eq!(results.len(), 1);
        assert!(results[0].is_err());
    }
}
