//! First start: a root organization, built-in roles, and the platform
//! administrator; every start: a fresh one-hour admin token.

use std::path::Path;

use generated::platform::iam::v2::{
    Group, GroupStore, Identity, IdentityStore, Role, RoleBinding, RoleBindingStore, RoleStore,
};
use runtime::Caller;
use runtime::auth::ApiTokens;
use runtime::resource::Resource;
use runtime::standard::prepare_create;
use serde::{Deserialize, Serialize};

use crate::store::SqlStore;

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

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Reads the bootstrap state, creating it on first start.
pub async fn ensure(
    data_dir: &Path,
    store: &SqlStore,
    capabilities: &[&str],
) -> Result<Bootstrap, BoxError> {
    let path = data_dir.join(STATE_FILE);
    if let Ok(text) = std::fs::read_to_string(&path) {
        return Ok(serde_json::from_str(&text)?);
    }
    let root: Group = create("", |g: &mut Group| {
        g.name = "root organization".into();
        g.description = "Created at first start.".into();
    });
    store.insert_group(&root).await?;
    let mut owner = None;
    for (name, description, allowed) in built_in_roles() {
        let role: Role = create(&root.uid, |r: &mut Role| {
            r.name = name.into();
            r.description = description.into();
            r.capabilities = capabilities
                .iter()
                .filter(|c| allowed(c))
                .map(|c| (*c).to_owned())
                .collect();
        });
        store.insert_role(&role).await?;
        owner.get_or_insert(role.uid);
    }
    let admin: Identity = create(&root.uid, |i: &mut Identity| {
        i.name = "platform administrator".into();
        i.description =
            "Holds `owner` on the root organization; may create root organizations.".into();
    });
    store.insert_identity(&admin).await?;
    let binding: RoleBinding = create(&root.uid, |b: &mut RoleBinding| {
        b.name = "platform administrator is owner".into();
        b.identity = admin.uid.clone();
        b.role = owner.clone().expect("owner is the first built-in role");
    });
    store.insert_role_binding(&binding).await?;

    let state = Bootstrap {
        root: root.uid,
        admin: admin.uid,
    };
    let temporary = path.with_extension("json.new");
    std::fs::write(&temporary, serde_json::to_vec_pretty(&state)?)?;
    std::fs::rename(&temporary, &path)?;
    tracing::info!(root = %state.root, admin = %state.admin, "created the root organization and the platform administrator");
    Ok(state)
}

/// `owner` may do everything, `editor` everything but delete, `viewer` read.
fn built_in_roles() -> [(&'static str, &'static str, fn(&str) -> bool); 3] {
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

fn create<R: Resource>(parent: &str, edit: impl FnOnce(&mut R)) -> R {
    let mut resource = R::default();
    edit(&mut resource);
    prepare_create(&Caller::System, parent, Some(resource), "bootstrap")
        .expect("built-in resources are valid")
}

/// Writes a fresh admin token (owner-only permissions) to the data dir.
pub fn write_admin_token(
    data_dir: &Path,
    tokens: &ApiTokens,
    state: &Bootstrap,
) -> Result<(), BoxError> {
    let token = tokens.issue(&state.admin);
    crate::keys::write_private(&data_dir.join(ADMIN_TOKEN_FILE), token.as_bytes(), true)?;
    Ok(())
}
