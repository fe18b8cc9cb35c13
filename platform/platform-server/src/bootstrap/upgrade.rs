//! Built-in roles that follow the API. A role is created once with the
//! capabilities its verbs select and then left to the administrator; when a
//! release adds capabilities (a collection, a method, a capability the
//! application checks), each built-in role gains those its verbs select, once:
//! the capabilities known are recorded (`platform_capabilities`), so one the
//! administrator took from a built-in role stays taken. A database of a
//! release before the record knows none: its built-in roles gain every
//! capability their verbs select that they lack.

use platform_api::platform::iam::v2::Role;
use protoapi_runtime::context::Held;
use protoapi_runtime::mask::Update;
use protoapi_runtime::store::Backend as _;
use protoapi_runtime::uidp;
use sqlx::Row as _;

use super::{BoxError, BuiltInRole, built_in_roles};
use crate::store::SqlStore;

/// Gives the built-in roles under `root` what `capabilities` holds that no
/// earlier start knew, as their verbs select it, and records them known.
/// Replicas starting together may both do it: a role only gains.
pub async fn grant_new_capabilities(
    store: &SqlStore,
    root: &str,
    capabilities: &[&str],
) -> Result<(), BoxError> {
    let known: Vec<String> = sqlx::query("SELECT capability FROM platform_capabilities")
        .fetch_all(store.pool())
        .await?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Result<_, _>>()?;
    let new: Vec<&str> = capabilities
        .iter()
        .copied()
        .filter(|capability| !known.iter().any(|k| k == capability))
        .collect();
    if new.is_empty() {
        return Ok(());
    }
    let built_in = built_in_roles();
    for uid in roles_under(store, root).await? {
        let Some(role) = store.get::<Role>(&uid).await? else {
            continue;
        };
        let Some(kind) = built_in.iter().find(|b| b.name == role.name) else {
            continue;
        };
        grant(store, role, kind, &new).await?;
    }
    for capability in new {
        sqlx::query(
            "INSERT INTO platform_capabilities (capability) VALUES ($1) \
             ON CONFLICT (capability) DO NOTHING",
        )
        .bind(capability.to_owned())
        .execute(store.pool())
        .await?;
    }
    Ok(())
}

/// Adds to `role` the capabilities of `new` its verbs select.
async fn grant(
    store: &SqlStore,
    role: Role,
    kind: &BuiltInRole,
    new: &[&str],
) -> Result<(), BoxError> {
    let added: Vec<String> = new
        .iter()
        .filter(|c| kind.holds(c) && !role.capabilities.iter().any(|held| held == *c))
        .map(|c| (*c).to_owned())
        .collect();
    if added.is_empty() {
        return Ok(());
    }
    tracing::info!(role = %role.name, capabilities = ?added, "a built-in role gains what this release adds");
    let uid = role.uid.clone();
    let mut capabilities = role.capabilities;
    capabilities.extend(added);
    let patch = Role {
        capabilities,
        ..Role::default()
    };
    let update = Update::of_fields(patch, &["capabilities"]).holding(Held::All, root_of(&uid));
    store.update::<Role>(&uid, &update).await?;
    Ok(())
}

fn root_of(uid: &str) -> String {
    uidp::parent(uid).unwrap_or_default().to_owned()
}

/// The uids of the roles directly under `root`.
async fn roles_under(store: &SqlStore, root: &str) -> Result<Vec<String>, BoxError> {
    let (start, end) = uidp::descendant_range(root);
    let uids: Vec<String> = sqlx::query("SELECT uid FROM roles WHERE uid >= $1 AND uid < $2")
        .bind(start)
        .bind(end)
        .fetch_all(store.pool())
        .await?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Result<_, _>>()?;
    Ok(uids
        .into_iter()
        .filter(|uid| uidp::parent(uid) == Some(root))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::{Plan, ensure, record};

    /// The capabilities of each built-in role, in `roles.toml` order.
    async fn held(store: &SqlStore) -> Vec<Vec<String>> {
        let record = record::read(store).await.unwrap().unwrap();
        let plan: Plan = serde_json::from_str(&record.plan).unwrap();
        let mut held = Vec::new();
        for uid in &plan.roles {
            let mut capabilities = store.get::<Role>(uid).await.unwrap().unwrap().capabilities;
            capabilities.sort();
            held.push(capabilities);
        }
        held
    }

    #[tokio::test]
    async fn built_in_roles_gain_what_a_release_adds_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::open_sqlite(dir.path()).await.unwrap();
        let first = ["groups.delete", "groups.get"];
        ensure(dir.path(), &store, &first).await.unwrap();
        assert_eq!(
            held(&store).await,
            [
                vec!["groups.delete", "groups.get"],
                vec!["groups.get"],
                vec!["groups.get"]
            ]
        );

        // The administrator takes `groups.get` from `viewer`.
        let record = record::read(&store).await.unwrap().unwrap();
        let plan: Plan = serde_json::from_str(&record.plan).unwrap();
        let taken = Update::of_fields(Role::default(), &["capabilities"]);
        store.update::<Role>(&plan.roles[2], &taken).await.unwrap();

        // A release adds the registry's capabilities.
        let next = ["groups.delete", "groups.get", "repos.pull", "repos.push"];
        ensure(dir.path(), &store, &next).await.unwrap();
        assert_eq!(
            held(&store).await,
            [
                vec!["groups.delete", "groups.get", "repos.pull", "repos.push"],
                vec!["groups.get", "repos.pull", "repos.push"],
                vec!["repos.pull"],
            ],
            "each gains what its verbs select; what was taken stays taken"
        );
        ensure(dir.path(), &store, &next).await.unwrap();
        assert_eq!(held(&store).await[2], ["repos.pull"], "once");
    }
}
