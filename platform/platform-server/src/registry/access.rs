//! Repos as the registry sees them. Pulling needs reading the repo
//! (`repos.get`, or its `public` flag, decided by the generated `GetRepo`
//! itself, as the API decides it); pushing and deleting images need
//! `repos.update` on it.

use std::sync::Arc;

use platform_api::platform::registry::v2::{GetRepoRequest, RepoServiceApi};
use protoapi_runtime::auth::BoxFuture;
use protoapi_runtime::registry::{Actions, Repositories};
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::{Caller, Code, Error};

use crate::store::SqlStore;

/// The capability pushing and deleting images need on the repo.
const PUSH: &str = "repos.update";

/// Repos as the registry sees them.
pub struct Repos {
    api: RepoServiceApi<SqlStore>,
    context: ApiContext,
}

impl Repos {
    pub fn new(store: Arc<SqlStore>, context: ApiContext) -> Self {
        Repos {
            api: RepoServiceApi::new(store, context.clone()),
            context,
        }
    }

    async fn decide(&self, caller: &Caller, name: &str) -> Result<Actions, Error> {
        if !protoapi_runtime::uidp::is_valid(name) {
            return Ok(Actions::NONE);
        }
        let request = GetRepoRequest {
            uid: name.to_owned(),
        };
        if let Err(error) = self.api.get_repo(caller, request).await {
            return refused(error).map(|()| Actions::NONE);
        }
        let write = match self.context.authorizer.check(caller, PUSH, name).await {
            Ok(()) => true,
            Err(error) => refused(error).map(|()| false)?,
        };
        Ok(Actions {
            pull: true,
            push: write,
            delete: write,
        })
    }
}

/// `Ok` for an error that refuses (a missing repo, a denial, no token), so
/// that every refusal answers alike; the error itself when deciding failed.
fn refused(error: Error) -> Result<(), Error> {
    match error.code() {
        Code::NotFound | Code::PermissionDenied | Code::Unauthenticated | Code::InvalidArgument => {
            Ok(())
        }
        _ => Err(error),
    }
}

impl Repositories for Repos {
    fn actions<'a>(
        &'a self,
        caller: &'a Caller,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Actions, Error>> {
        Box::pin(self.decide(caller, name))
    }
}
