//! The custom methods of `google.example.library.v1.LibraryService`, over the
//! generated storage of shelves and books.

use std::sync::Arc;

use protoapi_runtime::sql::SqlStore;
use protoapi_runtime::{Caller, Error};

use crate::google::example::library::v1::{
    Book, BookStore, LibraryServiceHandler, MergeShelvesRequest, MoveBookRequest, Shelf, ShelfStore,
};

/// Every service on `store`: `LibraryService` has custom methods.
pub async fn serve(services: crate::Services, store: Arc<SqlStore>) -> crate::Services {
    services.library_service(store)
}

const SHELF: &str = "library-example.googleapis.com/Shelf";
const BOOK: &str = "library-example.googleapis.com/Book";

impl LibraryServiceHandler for SqlStore {
    /// Not served by this walk: moving every book needs a scan of the
    /// shelf, which the walk leaves to `MoveBook`.
    async fn merge_shelves(&self, _: &Caller, _: MergeShelvesRequest) -> Result<Shelf, Error> {
        Err(Error::unimplemented("MergeShelves"))
    }

    /// Moves the book `name` to `other_shelf_name`, keeping its id.
    async fn move_book(&self, _: &Caller, request: MoveBookRequest) -> Result<Book, Error> {
        let shelf = &request.other_shelf_name;
        if self.get_shelf(shelf).await?.is_none() {
            return Err(Error::not_found(SHELF, shelf));
        }
        let mut book = self
            .get_book(&request.name)
            .await?
            .ok_or_else(|| Error::not_found(BOOK, &request.name))?;
        let id = request.name.rsplit('/').next().unwrap_or_default();
        book.name = format!("{shelf}/books/{id}");
        self.insert_book(&book).await?;
        self.delete_book(&request.name, None).await?;
        Ok(book)
    }
}
