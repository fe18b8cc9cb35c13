//! The registry beside the Platform API (CONTRACT §10). A repository name is
//! a repo's uid: its owning group's uid and one segment
//! (`<40 hex>/<16 hex>`), so `localhost:8080/<uid>:v1` names tag `v1` of
//! that repo. Who may pull and push is decided as the API decides (`access`).
//! Each manifest is an image of the API (`registry/v2/images`), the repo's
//! child: its uid is the repo's plus the digest's first 16 hex characters
//! (`images`). Blobs are on the data dir's disk or in object storage
//! (`storage`), and a running server keeps it all tidy (`upkeep`).

mod access;
mod images;
mod storage;
mod upkeep;

pub use access::Repos;
pub use images::{ImageDeletes, Images, RepoDeletes};
pub use storage::{ObjectStorage, storage};
pub use upkeep::upkeep;
