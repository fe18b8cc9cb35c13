//! Who may do what to a repository: the application answers it from its own
//! access rules ([`Repositories`]), and the registry asks per request or
//! once per token.

use protoapi_core::Caller;
use protoapi_core::auth::BoxFuture;
use protoapi_core::error::Error;
use serde::{Deserialize, Serialize};

/// The actions of the token flow on one repository.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actions {
    /// Read manifests, blobs, tags and referrers.
    pub pull: bool,
    /// Upload blobs and put manifests and tags.
    pub push: bool,
    /// Delete manifests, tags and blobs.
    pub delete: bool,
}

impl Actions {
    /// No action at all: what a missing repository and one the caller may
    /// not see both answer.
    pub const NONE: Actions = Actions {
        pull: false,
        push: false,
        delete: false,
    };

    /// The actions of a scope's list (`pull,push`; `*` is all of them);
    /// unknown ones are ignored, as the token flow asks.
    pub fn parse(list: &str) -> Actions {
        let mut actions = Actions::NONE;
        for action in list.split(',') {
            match action.trim() {
                "pull" => actions.pull = true,
                "push" => actions.push = true,
                "delete" => actions.delete = true,
                "*" => {
                    actions = Actions {
                        pull: true,
                        push: true,
                        delete: true,
                    };
                }
                _ => {}
            }
        }
        actions
    }

    /// The actions both allow.
    pub fn and(self, other: Actions) -> Actions {
        Actions {
            pull: self.pull && other.pull,
            push: self.push && other.push,
            delete: self.delete && other.delete,
        }
    }

    /// The actions either allows.
    pub fn or(self, other: Actions) -> Actions {
        Actions {
            pull: self.pull || other.pull,
            push: self.push || other.push,
            delete: self.delete || other.delete,
        }
    }

    /// Whether every action of `needed` is among these.
    pub fn covers(self, needed: Actions) -> bool {
        self.and(needed) == needed
    }

    /// The actions as a scope lists them (`pull,push`).
    pub fn list(self) -> Vec<&'static str> {
        [
            (self.pull, "pull"),
            (self.push, "push"),
            (self.delete, "delete"),
        ]
        .into_iter()
        .filter_map(|(held, name)| held.then_some(name))
        .collect()
    }
}

/// The application's repositories, as the registry sees them.
pub trait Repositories: Send + Sync + 'static {
    /// What `caller` (anonymous, or an identity with an API token) may do
    /// to the repository `name`. A repository that does not exist, and one
    /// the caller may not see, are both [`Actions::NONE`]: the registry
    /// answers both alike. An error is a failure to decide (storage down).
    fn actions<'a>(
        &'a self,
        caller: &'a Caller,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Actions, Error>>;

    /// Whether the repository `name` exists. The registry forgets what it
    /// keeps of one that does not ([`crate::Registry::forget_missing`]):
    /// one deleted while a push to it was in progress.
    fn exists<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<bool, Error>>;
}

/// A scope of the token flow: `repository:<name>:<actions>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    pub name: String,
    pub actions: Actions,
}

impl Scope {
    /// Parses one scope; another resource type (`registry:catalog:*`) or a
    /// malformed one is `None`, left out of the token.
    pub fn parse(text: &str) -> Option<Scope> {
        let rest = text.strip_prefix("repository:")?;
        let (name, actions) = rest.rsplit_once(':')?;
        crate::path::is_name(name).then(|| Scope {
            name: name.to_owned(),
            actions: Actions::parse(actions),
        })
    }

    /// The scope as a challenge names it.
    pub fn render(name: &str, actions: Actions) -> String {
        format!("repository:{name}:{}", actions.list().join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_and_actions_parse() {
        let scope = Scope::parse("repository:a/b:pull,push").unwrap();
        assert_eq!(scope.name, "a/b");
        assert_eq!(
            scope.actions,
            Actions {
                pull: true,
                push: true,
                delete: false
            }
        );
        assert_eq!(Scope::parse("registry:catalog:*"), None);
        assert_eq!(Scope::parse("repository:A:pull"), None);
        assert_eq!(Actions::parse("*").list(), ["pull", "push", "delete"]);
        assert!(Actions::parse("pull,push").covers(Actions::parse("pull")));
        assert!(!Actions::parse("pull").covers(Actions::parse("push")));
        assert_eq!(
            Scope::render("a", Actions::parse("push,pull")),
            "repository:a:pull,push"
        );
    }
}
