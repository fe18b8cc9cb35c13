//! Repos as the registry sees them. Pulling a repo's images needs
//! `repos.pull` on it, or its `public` flag; pushing, tagging and deleting
//! them `repos.push`: capabilities the API declares for the registry to
//! check (annotation `capabilities`), granted by role bindings like any
//! other. A repo that does not exist and one the caller may do nothing to
//! answer alike.

use std::sync::Arc;

use platform_api::platform::registry::v2::{GetRepoRequest, Repo, RepoServiceApi};
use protoapi_runtime::auth::BoxFuture;
use protoapi_runtime::registry::{Actions, Repositories};
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::{Caller, Code, Error};

use crate::store::SqlStore;

/// The capability pulling a private repo's images needs.
const PULL: &str = "repos.pull";
/// The capability pushing, tagging and deleting images needs.
const PUSH: &str = "repos.push";

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

    /// The repo `name`, if there is one.
    async fn repo(&self, name: &str) -> Result<Option<Repo>, Error> {
        if !protoapi_runtime::uidp::is_valid(name) {
            return Ok(None);
        }
        let request = GetRepoRequest {
            uid: name.to_owned(),
        };
        match self.api.get_repo(&Caller::System, request).await {
            Ok(repo) => Ok(Some(repo)),
            Err(error) => refused(error).map(|()| None),
        }
    }

    async fn decide(&self, caller: &Caller, name: &str) -> Result<Actions, Error> {
        let Some(repo) = self.repo(name).await? else {
            return Ok(Actions::NONE);
        };
        let push = self.holds(caller, PUSH, name).await?;
        Ok(Actions {
            pull: repo.public || self.holds(caller, PULL, name).await?,
            push,
            delete: push,
        })
    }

    /// Whether `caller` holds `capability` on repo `name`.
    async fn holds(&self, caller: &Caller, capability: &str, name: &str) -> Result<bool, Error> {
        match self
            .context
            .authorizer
            .check(caller, capability, name)
            .await
        {
            Ok(()) => Ok(true),
            Err(error) => refused(error).map(|()| false),
        }
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

    fn exists<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<bool, Error>> {
        Box::pin(async move { Ok(self.repo(name).await?.is_some()) })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_capabilities_checked_are_the_apis() {
        for capability in [super::PULL, super::PUSH] {
            assert!(
                platform_api::CAPABILITIES.contains(&capability),
                "{capability}"
            );
        }
    }
}
