//! First start: a root organization, built-in roles, and the platform
//! administrator; every start: a fresh one-hour admin token.
//!
//! What the first start creates is recorded in the database
//! (`platform_bootstrap`), so every server on one database uses the same root
//! organization and administrator. The record is written before the items:
//! it names their uids, the first server to store it wins, and every server
//! that finds it incomplete creates whichever planned items are missing (an
//! item another server created first is simply there). Servers starting
//! together therefore create one root and one administrator, and a start
//! interrupted half-way is finished by the next one.

use std::path::Path;

use generated::platform::iam::v2::{
    Group, GroupStore, Identity, IdentityStore, Role, RoleBinding, RoleBindingStore, RoleStore,
};
use runtime::Caller;
use runtime::auth::ApiTokens;
use runtime::resource::Resource;
use runtime::standard::prepare_create;
use runtime::store::StoreError;
use runtime::uidp;
use serde::{Deserialize, Serialize};

mod record;

pub use record::{BootstrapRecord, MIGRATIONS};

use crate::store::SqlStore;

/// Where releases that kept the bootstrap state in the data directory wrote it.
const STATE_FILE: &str = "bootstrap.json";
/// Where the admin token is written at every start.
pub const ADMIN_TOKEN_FILE: &str = "admin.token";

/// What the first start created.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Bootstrap {
    /// The root organization.
    pub root: String,
    /// The platform administrator's identity.
    pub admin: String,
}

/// The uids of the items the first start creates besides the root and the
/// administrator (the record's `plan`).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Plan {
    /// The built-in roles, in [`built_in_roles`] order.
    roles: Vec<String>,
    /// The binding of the administrator to `owner`.
    binding: String,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Reads the bootstrap record, creating the root organization, roles and
/// administrator it names if another server has not.
pub async fn ensure(
    data_dir: &Path,
    store: &SqlStore,
    capabilities: &[&str],
) -> Result<Bootstrap, BoxError> {
    let earlier = read_state_file(data_dir)?;
    let record = match record::read(store).await? {
        Some(record) => record,
        None => {
            let proposal = match &earlier {
                Some(state) if store.get_group(&state.root).await?.is_some() => BootstrapRecord {
                    root: state.root.clone(),
                    admin: state.admin.clone(),
                    plan: "{}".into(),
                    complete: true,
                },
                _ => plan(),
            };
            record::claim(store, &proposal).await?
        }
    };
    if !record.complete {
        create_planned(&record, store, capabilities).await?;
        record::complete(store).await?;
    }
    if let Some(state) = earlier
        && (state.root != record.root || state.admin != record.admin)
    {
        tracing::warn!(
            file = %data_dir.join(STATE_FILE).display(),
            root = %record.root,
            admin = %record.admin,
            "the data directory names another bootstrap than the database; using the database's"
        );
    }
    Ok(Bootstrap {
        root: record.root,
        admin: record.admin,
    })
}

/// The state file an earlier release wrote, if any.
fn read_state_file(data_dir: &Path) -> Result<Option<Bootstrap>, BoxError> {
    let path = data_dir.join(STATE_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(serde_json::from_str(&text).map_err(|e| {
            format!("{} is not a bootstrap state file: {e}", path.display())
        })?)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(format!("cannot read {}: {error}", path.display()).into()),
    }
}

/// A new record: fresh uids for everything the first start creates.
fn plan() -> BootstrapRecord {
    let root = uidp::new_root();
    let plan = Plan {
        roles: built_in_roles()
            .iter()
            .map(|_| uidp::new_child(&root))
            .collect(),
        binding: uidp::new_child(&root),
    };
    BootstrapRecord {
        admin: uidp::new_child(&root),
        plan: serde_json::to_string(&plan).expect("a plan serializes"),
        root,
        complete: false,
    }
}

/// Creates every item of the record that does not exist yet.
async fn create_planned(
    record: &BootstrapRecord,
    store: &SqlStore,
    capabilities: &[&str],
) -> Result<(), BoxError> {
    let plan: Plan = serde_json::from_str(&record.plan)?;
    let roles = built_in_roles();
    if plan.roles.len() != roles.len() {
        return Err("the bootstrap record does not plan every built-in role".into());
    }
    let root: Group = planned(&record.root, |g: &mut Group| {
        g.name = "root organization".into();
        g.description = "Created at first start.".into();
    });
    let created_root = created(store.insert_group(&root).await)?;
    for ((name, description, allowed), uid) in roles.into_iter().zip(&plan.roles) {
        let role: Role = planned(uid, |r: &mut Role| {
            r.name = name.into();
            r.description = description.into();
            r.capabilities = capabilities
                .iter()
                .filter(|c| allowed(c))
                .map(|c| (*c).to_owned())
                .collect();
        });
        created(store.insert_role(&role).await)?;
    }
    let admin: Identity = planned(&record.admin, |i: &mut Identity| {
        i.name = "platform administrator".into();
        i.description =
            "Holds `owner` on the root organization; may create root organizations.".into();
    });
    created(store.insert_identity(&admin).await)?;
    let binding: RoleBinding = planned(&plan.binding, |b: &mut RoleBinding| {
        b.name = "platform administrator is owner".into();
        b.identity = admin.uid.clone();
        b.role = plan.roles[0].clone();
    });
    created(store.insert_role_binding(&binding).await)?;
    if created_root {
        tracing::info!(root = %record.root, admin = %record.admin, "created the root organization and the platform administrator");
    }
    Ok(())
}

/// Whether an insert created the item (`false`: it already existed).
fn created(result: Result<(), StoreError>) -> Result<bool, BoxError> {
    match result {
        Ok(()) => Ok(true),
        Err(StoreError::AlreadyExists) => Ok(false),
        Err(error) => Err(error.into()),
    }
}

/// A built-in role: name, description, and which capabilities it holds.
type BuiltInRole = (&'static str, &'static str, fn(&str) -> bool);

/// `owner` may do everything, `editor` everything but delete, `viewer` read.
fn built_in_roles() -> [BuiltInRole; 3] {
    [
        ("owner", "Every capability.", |_| true),
        ("editor", "Every capability except deleting.", |c| {
            !c.ends_with(".delete")
        }),
        ("viewer", "Reads and lists.", |c| {
            c.ends_with(".get") || c.ends_with(".list")
        }),
    ]
}

/// A built-in item with the uid the record planned for it.
fn planned<R: Resource>(uid: &str, edit: impl FnOnce(&mut R)) -> R {
    let mut resource = R::default();
    edit(&mut resource);
    let parent = uidp::parent(uid).unwrap_or_default();
    let mut resource = prepare_create(&Caller::System, parent, Some(resource), "bootstrap")
        .expect("built-in resources are valid");
    resource.set_uid(uid.to_owned());
    resource.set_etag(runtime::standard::etag(&resource));
    resource
}

/// Writes a fresh admin token (owner-only permissions) to the data dir,
/// replacing the previous one atomically.
pub fn write_admin_token(
    data_dir: &Path,
    tokens: &ApiTokens,
    state: &Bootstrap,
) -> Result<(), BoxError> {
    let token = tokens.issue(&state.admin);
    crate::keys::replace_private(&data_dir.join(ADMIN_TOKEN_FILE), token.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_start_interrupted_half_way_is_finished_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::open_sqlite(dir.path()).await.unwrap();
        // A server stored the record and the root organization, then stopped.
        let record = record::claim(&store, &plan()).await.unwrap();
        let root: Group = planned(&record.root, |g: &mut Group| g.name = "root".into());
        store.insert_group(&root).await.unwrap();

        let state = ensure(dir.path(), &store, &["groups.get"]).await.unwrap();
        assert_eq!(
            (state.root, state.admin),
            (record.root.clone(), record.admin.clone())
        );
        assert!(record::read(&store).await.unwrap().unwrap().complete);
        let plan: Plan = serde_json::from_str(&record.plan).unwrap();
        for role in &plan.roles {
            assert!(store.get_role(role).await.unwrap().is_some());
        }
        assert!(store.get_identity(&record.admin).await.unwrap().is_some());
        let binding = store
            .get_role_binding(&plan.binding)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (binding.identity, binding.role),
            (record.admin, plan.roles[0].clone())
        );
    }

    #[tokio::test]
    async fn a_data_dir_of_an_earlier_release_is_adopted() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::open_sqlite(dir.path()).await.unwrap();
        let root: Group = planned(&uidp::new_root(), |g: &mut Group| g.name = "root".into());
        store.insert_group(&root).await.unwrap();
        let earlier = Bootstrap {
            root: root.uid.clone(),
            admin: uidp::new_child(&root.uid),
        };
        std::fs::write(
            dir.path().join(STATE_FILE),
            serde_json::to_vec(&earlier).unwrap(),
        )
        .unwrap();

        let state = ensure(dir.path(), &store, &["groups.get"]).await.unwrap();
        assert_eq!((state.root, state.admin), (earlier.root, earlier.admin));
        assert!(record::read(&store).await.unwrap().unwrap().complete);
    }
}
