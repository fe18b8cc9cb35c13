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
//!
//! Releases before the record kept the bootstrap in the data directory
//! (`bootstrap.json`, written only by the server). Their databases are
//! migrated to a record of an earlier bootstrap that names nothing, and the
//! first server whose data directory holds that file fills it in; the others
//! wait for it rather than guess the administrator from what users named.

use std::path::Path;
use std::time::Duration;

use platform_api::platform::iam::v2::{
    Group, GroupStore, Identity, IdentityStore, Role, RoleBinding, RoleBindingStore, RoleStore,
};
use protoapi_runtime::Caller;
use protoapi_runtime::auth::ApiTokens;
use protoapi_runtime::resource::Resource;
use protoapi_runtime::standard::prepare_create;
use protoapi_runtime::store::StoreError;
use protoapi_runtime::uidp;
use serde::{Deserialize, Serialize};

mod record;
mod upgrade;

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

/// How long a server without the earlier release's `bootstrap.json` waits
/// for a server with it to adopt the earlier bootstrap.
const ADOPTION_WAIT: Duration = Duration::from_secs(30);

/// Reads the bootstrap record, creating the root organization, roles and
/// administrator it names if another server has not.
pub async fn ensure(
    data_dir: &Path,
    store: &SqlStore,
    capabilities: &[&str],
) -> Result<Bootstrap, BoxError> {
    ensure_within(data_dir, store, capabilities, ADOPTION_WAIT).await
}

async fn ensure_within(
    data_dir: &Path,
    store: &SqlStore,
    capabilities: &[&str],
    adoption_wait: Duration,
) -> Result<Bootstrap, BoxError> {
    let earlier = read_state_file(data_dir)?;
    let mut record = match record::read(store).await? {
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
    if record.is_earlier() {
        record = adopt(data_dir, store, earlier.as_ref(), adoption_wait).await?;
    }
    if !record.complete {
        create_planned(&record, store, capabilities).await?;
        record::complete(store).await?;
    }
    upgrade::grant_new_capabilities(store, &record.root, capabilities).await?;
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

/// Records the bootstrap of the earlier release that created the database:
/// the one this data directory's `bootstrap.json` names (which only a
/// server writes) if the database holds its root, or else the one another
/// server adopts within `wait`. Never one the database's contents suggest:
/// users name items, so no name identifies the administrator.
async fn adopt(
    data_dir: &Path,
    store: &SqlStore,
    earlier: Option<&Bootstrap>,
    wait: Duration,
) -> Result<BootstrapRecord, BoxError> {
    if let Some(state) = earlier
        && store.get_group(&state.root).await?.is_some()
    {
        let record = record::adopt(store, &state.root, &state.admin).await?;
        if record.root == state.root {
            tracing::info!(root = %record.root, admin = %record.admin, "adopted the bootstrap of the earlier release");
        }
        return Ok(record);
    }
    tracing::info!(
        "the database holds the bootstrap of an earlier release, which only that release's \
         bootstrap.json names; waiting for a server with it to start"
    );
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        if let Some(record) = record::read(store).await?
            && !record.is_earlier()
        {
            return Ok(record);
        }
        if tokio::time::Instant::now() >= deadline {
            let file = data_dir.join(STATE_FILE);
            let found = match earlier {
                Some(state) => format!(
                    "{} names the root organization `{}`, which the database does not hold",
                    file.display(),
                    state.root
                ),
                None => format!("{} does not exist", file.display()),
            };
            return Err(format!(
                "the database was created by an earlier release, whose bootstrap.json (in its \
                 data directory) names the root organization and the platform administrator; \
                 {found}: start the server with that data directory, or copy its bootstrap.json \
                 into this one"
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The state file an earlier release wrote, if any.
fn read_state_file(data_dir: &Path) -> Result<Option<Bootstrap>, BoxError> {
    let path = data_dir.join(STATE_FILE);
    crate::owner_only::restrict_file(&path);
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
    for (built_in, uid) in roles.into_iter().zip(&plan.roles) {
        let role: Role = planned(uid, |r: &mut Role| {
            r.capabilities = capabilities
                .iter()
                .filter(|c| built_in.holds(c))
                .map(|c| (*c).to_owned())
                .collect();
            r.name = built_in.name;
            r.description = built_in.description;
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

/// A built-in role, as `roles.toml` declares it.
#[derive(Debug, Deserialize)]
struct BuiltInRole {
    name: String,
    description: String,
    /// The verbs of the capabilities it holds; `*` is every verb.
    verbs: Vec<String>,
}

impl BuiltInRole {
    fn holds(&self, capability: &str) -> bool {
        let verb = capability.rsplit('.').next().unwrap_or(capability);
        self.verbs.iter().any(|v| v == "*" || v == verb)
    }
}

/// The built-in roles of `roles.toml`, in its order.
fn built_in_roles() -> Vec<BuiltInRole> {
    #[derive(Deserialize)]
    struct File {
        role: Vec<BuiltInRole>,
    }
    let file: File = toml::from_str(include_str!("roles.toml")).expect("roles.toml is valid");
    file.role
}

/// A built-in item with the uid the record planned for it.
fn planned<R: Resource>(uid: &str, edit: impl FnOnce(&mut R)) -> R {
    let mut resource = R::default();
    edit(&mut resource);
    let parent = uidp::parent(uid).unwrap_or_default();
    let mut resource = prepare_create(&Caller::System, parent, Some(resource), "bootstrap")
        .expect("built-in resources are valid");
    resource.set_key(uid.to_owned());
    resource.set_etag(protoapi_runtime::standard::etag(&resource));
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
    crate::owner_only::replace(&data_dir.join(ADMIN_TOKEN_FILE), token.as_bytes())?;
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

    /// A database of a release before the record, as migration 2 leaves it:
    /// a root organization and a record of an earlier bootstrap.
    async fn earlier_release_database(dir: &Path) -> (SqlStore, Group) {
        let store = crate::store::open_sqlite(dir).await.unwrap();
        let root: Group = planned(&uidp::new_root(), |g: &mut Group| g.name = "root".into());
        store.insert_group(&root).await.unwrap();
        sqlx::query(
            "INSERT INTO platform_bootstrap (id, root, admin, plan, complete) \
             VALUES (1, '', '', '{}', 0)",
        )
        .execute(store.pool())
        .await
        .unwrap();
        assert!(record::read(&store).await.unwrap().unwrap().is_earlier());
        (store, root)
    }

    /// Writes the state file of an earlier release's bootstrap under `root`
    /// to `dir`, and returns that bootstrap.
    fn write_state_file(dir: &Path, root: &Group) -> Bootstrap {
        let earlier = Bootstrap {
            root: root.uid.clone(),
            admin: uidp::new_child(&root.uid),
        };
        std::fs::write(dir.join(STATE_FILE), serde_json::to_vec(&earlier).unwrap()).unwrap();
        earlier
    }

    #[tokio::test]
    async fn an_earlier_bootstrap_is_adopted_from_the_state_file() {
        let dir = tempfile::tempdir().unwrap();
        let (store, root) = earlier_release_database(dir.path()).await;
        let earlier = write_state_file(dir.path(), &root);

        let state = ensure(dir.path(), &store, &["groups.get"]).await.unwrap();
        assert_eq!(
            (state.root, state.admin),
            (earlier.root.clone(), earlier.admin.clone())
        );
        let record = record::read(&store).await.unwrap().unwrap();
        assert_eq!(
            (record.root, record.admin, record.complete),
            (earlier.root, earlier.admin, true)
        );
    }

    #[tokio::test]
    async fn an_earlier_bootstrap_is_not_guessed_without_the_state_file() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = earlier_release_database(dir.path()).await;
        let wait = Duration::from_millis(300);
        let error = ensure_within(dir.path(), &store, &["groups.get"], wait)
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains("bootstrap.json"), "{error}");
        assert!(record::read(&store).await.unwrap().unwrap().is_earlier());
        let roots: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM groups WHERE parent = ''")
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(roots, 1, "no second root organization");
    }

    #[tokio::test]
    async fn a_data_dir_of_an_earlier_release_is_adopted() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::open_sqlite(dir.path()).await.unwrap();
        let root: Group = planned(&uidp::new_root(), |g: &mut Group| g.name = "root".into());
        store.insert_group(&root).await.unwrap();
        let earlier = write_state_file(dir.path(), &root);

        let state = ensure(dir.path(), &store, &["groups.get"]).await.unwrap();
        assert_eq!((state.root, state.admin), (earlier.root, earlier.admin));
        assert!(record::read(&store).await.unwrap().unwrap().complete);
    }

    #[test]
    fn built_in_roles_hold_what_their_verbs_name() {
        let capabilities = [
            "groups.create",
            "groups.get",
            "groups.list",
            "groups.update",
            "groups.delete",
        ];
        let held = |role: &BuiltInRole| -> Vec<&str> {
            capabilities.into_iter().filter(|c| role.holds(c)).collect()
        };
        let roles = built_in_roles();
        let names: Vec<&str> = roles.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["owner", "editor", "viewer"]);
        assert_eq!(held(&roles[0]), capabilities);
        assert_eq!(held(&roles[1]), capabilities[..4]);
        assert_eq!(held(&roles[2]), ["groups.get", "groups.list"]);
    }
}
