//! The Press API's custom methods, over any of the library's stores.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, RwLock};

use futures_util::stream;
use protoapi_runtime::resource::{Resource, SortValue};
use protoapi_runtime::store::{Backend, Hierarchy, ListQuery, Matching, OrderBy, Page, StoreError};
use protoapi_runtime::stream::MessageStream;
use protoapi_runtime::{Caller, Error};

use crate::google::api::HttpBody;
use crate::press::v1::{
    Book, ExportBooksRequest, GetCoverRequest, PressHandler, Publisher, SearchBooksRequest,
    SearchBooksResponse, UploadCoverRequest,
};

/// At most this many books are searched (a publisher's first, by name).
const SEARCHED: u64 = 1000;
/// Books read per page of an export.
const EXPORT_PAGE: u64 = 100;
/// The largest cover kept.
const MAX_COVER: usize = 1 << 20;
/// The image types a cover may have: raster images only (an SVG may hold
/// script, and a cover is served back on the API's origin).
const COVER_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A store, with the books' covers beside it (in memory: an example).
#[derive(Debug)]
pub struct Catalog<B> {
    store: Arc<B>,
    covers: RwLock<HashMap<String, HttpBody>>,
}

impl<B> Catalog<B> {
    pub fn new(store: B) -> Self {
        Catalog {
            store: Arc::new(store),
            covers: RwLock::default(),
        }
    }
}

impl<B: Backend> Catalog<B> {
    /// The book named `name`, or NOT_FOUND (INVALID_ARGUMENT for a name
    /// that is not a book's).
    async fn book(&self, name: &str) -> Result<Book, Error> {
        if let Some(pattern) = Book::NAMES {
            pattern.parse_name("name", name)?;
        }
        self.store
            .get::<Book>(name)
            .await?
            .ok_or_else(|| Error::not_found(Book::TYPE, name))
    }
}

/// INVALID_ARGUMENT unless `parent` is a publisher's name.
fn check_parent(parent: &str) -> Result<(), Error> {
    match Book::NAMES {
        Some(pattern) => pattern.parse_parent(parent),
        None => Ok(()),
    }
}

/// Up to `limit` books of `parent` after the book named `after`, by name;
/// withdrawn (soft-deleted) books are left out, as List leaves them out.
async fn books<B: Backend>(
    store: &B,
    parent: &str,
    after: Option<String>,
    limit: u64,
) -> Result<Page<Book>, StoreError> {
    let query = ListQuery {
        filter: Hierarchy::ChildrenOf(parent.to_owned()),
        matching: Matching {
            live_only: true,
            ..Matching::default()
        },
        order_by: vec![OrderBy {
            field: "uid".to_owned(),
            descending: false,
        }],
        after: after.map(|name| vec![SortValue::Text(name)]),
        skip: 0,
        limit,
        byte_budget: u64::MAX,
        public: None,
    };
    store.list::<Book>(&query).await
}

impl<B: Backend> PressHandler for Catalog<B> {
    async fn search_books(
        &self,
        _caller: &Caller,
        request: SearchBooksRequest,
    ) -> Result<SearchBooksResponse, Error> {
        check_parent(&request.parent)?;
        if request.query.trim().is_empty() {
            return Err(Error::invalid_field("query", "required"));
        }
        let words: Vec<String> = request
            .query
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        let page = books(&*self.store, &request.parent, None, SEARCHED).await?;
        let mut found: Vec<Book> = page
            .items
            .into_iter()
            .filter(|book| {
                let title = book.title.to_lowercase();
                words.iter().all(|word| title.contains(word.as_str()))
            })
            .filter(|book| request.formats.is_empty() || request.formats.contains(&book.format))
            .collect();
        found.sort_by(|a, b| a.title.cmp(&b.title));
        Ok(SearchBooksResponse { books: found })
    }

    async fn upload_cover(
        &self,
        _caller: &Caller,
        request: UploadCoverRequest,
    ) -> Result<(), Error> {
        let Some(cover) = request.cover else {
            return Err(Error::invalid_field("cover", "required"));
        };
        if !COVER_TYPES.contains(&cover.content_type.as_str()) {
            return Err(Error::invalid_field(
                "cover.contentType",
                format!("must be one of: {}", COVER_TYPES.join(", ")),
            ));
        }
        if cover.data.len() > MAX_COVER {
            return Err(Error::invalid_field(
                "cover.data",
                format!("at most {MAX_COVER} bytes"),
            ));
        }
        let book = self.book(&request.name).await?;
        self.covers
            .write()
            .expect("covers lock")
            .insert(book.name, cover);
        Ok(())
    }

    async fn get_cover(
        &self,
        _caller: &Caller,
        request: GetCoverRequest,
    ) -> Result<HttpBody, Error> {
        let book = self.book(&request.name).await?;
        let covers = self.covers.read().expect("covers lock");
        covers.get(&book.name).cloned().ok_or_else(|| {
            Error::not_found("press.example.com/Cover", &format!("{}/cover", book.name))
        })
    }

    async fn export_books(
        &self,
        _caller: &Caller,
        request: ExportBooksRequest,
    ) -> Result<MessageStream<Book>, Error> {
        check_parent(&request.parent)?;
        // A publisher that does not exist is an error before the stream
        // starts, not in it.
        if self
            .store
            .get::<Publisher>(&request.parent)
            .await?
            .is_none()
        {
            return Err(Error::not_found(Publisher::TYPE, &request.parent));
        }
        // Then page by page, each read once the last is sent: a slow
        // client holds one page, not the catalogue.
        let state = Export {
            store: Arc::clone(&self.store),
            parent: request.parent,
            pending: VecDeque::new(),
            last: None,
            more: true,
        };
        Ok(Box::pin(stream::unfold(state, Export::next)))
    }
}

/// Where an export is: the books read but not sent yet.
struct Export<B> {
    store: Arc<B>,
    parent: String,
    pending: VecDeque<Book>,
    /// The name of the last book read.
    last: Option<String>,
    more: bool,
}

impl<B: Backend> Export<B> {
    async fn next(mut self) -> Option<(Result<Book, Error>, Self)> {
        if self.pending.is_empty() && self.more {
            match books(&*self.store, &self.parent, self.last.take(), EXPORT_PAGE).await {
                Ok(page) => {
                    self.more = page.items.len() as u64 == EXPORT_PAGE;
                    self.last = page.items.last().map(|book| book.name.clone());
                    self.pending = page.items.into();
                }
                Err(error) => {
                    self.more = false;
                    return Some((Err(error.into()), self));
                }
            }
        }
        let book = self.pending.pop_front()?;
        Some((Ok(book), self))
    }
}

/// The catalogue's store is the API's: every standard method reads and
/// writes it.
impl<B: Backend> Backend for Catalog<B> {
    fn keeps(&self, resource_type: &str) -> bool {
        self.store.keeps(resource_type)
    }

    fn insert<R: Resource>(
        &self,
        resource: &R,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        self.store.insert(resource)
    }

    fn get<R: Resource>(
        &self,
        uid: &str,
    ) -> impl Future<Output = Result<Option<R>, StoreError>> + Send {
        self.store.get::<R>(uid)
    }

    fn list<R: Resource>(
        &self,
        query: &ListQuery,
    ) -> impl Future<Output = Result<Page<R>, StoreError>> + Send {
        self.store.list::<R>(query)
    }

    fn update<R: Resource>(
        &self,
        uid: &str,
        update: &protoapi_runtime::mask::Update<R>,
    ) -> impl Future<Output = Result<Option<R>, StoreError>> + Send {
        self.store.update(uid, update)
    }

    fn delete<R: Resource>(
        &self,
        uid: &str,
        etag: Option<&str>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        self.store.delete::<R>(uid, etag)
    }

    fn delete_forced<R: Resource>(
        &self,
        uid: &str,
        etag: Option<&str>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        self.store.delete_forced::<R>(uid, etag)
    }
}
