//! Every v2 collection of the API, driven through the generated client.
//!
//! Requests are assembled as canonical JSON (from flags) and decoded into the
//! typed request, so a misspelt filter or field is refused with a field
//! violation before anything is sent; answers are printed as canonical JSON.

use generated::Client;
use generated::platform::{advisory, iam, libraries, registry, vulnerabilities};
use runtime::{Code, Error, json};
use serde_json::Value;

/// One page of a list.
pub struct Page {
    pub items: Vec<Value>,
    pub next_page_token: String,
    pub total_count: i32,
}

fn to_json<M: json::JsonMessage>(message: &M) -> Value {
    serde_json::to_value(json::wire::Message(message)).expect("a message serializes to JSON")
}

/// The standard methods of one collection, over JSON.
trait Methods {
    async fn list(client: &Client, request: Value) -> Result<Page, Error>;
    async fn get(client: &Client, request: Value) -> Result<Value, Error>;
    async fn create(_: &Client, _: Value) -> Result<Value, Error> {
        Err(read_only())
    }
    async fn update(_: &Client, _: Value) -> Result<Value, Error> {
        Err(read_only())
    }
    async fn delete(_: &Client, _: Value) -> Result<(), Error> {
        Err(read_only())
    }
}

fn read_only() -> Error {
    Error::new(
        Code::InvalidArgument,
        "READ_ONLY_COLLECTION",
        "this collection is read-only in v2",
    )
}

/// `impl Methods` for a collection: its client accessor and request types.
macro_rules! methods {
    ($marker:ident, $accessor:ident, $get:ty, $list:ty) => {
        struct $marker;
        impl Methods for $marker {
            reads!($accessor, $get, $list);
        }
    };
    ($marker:ident, $accessor:ident, $get:ty, $list:ty, $create:ty, $update:ty, $delete:ty) => {
        struct $marker;
        impl Methods for $marker {
            reads!($accessor, $get, $list);

            async fn create(client: &Client, request: Value) -> Result<Value, Error> {
                let request: $create = json::from_value(request)?;
                Ok(to_json(&client.$accessor().create(request).await?))
            }

            async fn update(client: &Client, request: Value) -> Result<Value, Error> {
                let request: $update = json::from_value(request)?;
                Ok(to_json(&client.$accessor().update(request).await?))
            }

            async fn delete(client: &Client, request: Value) -> Result<(), Error> {
                let request: $delete = json::from_value(request)?;
                client.$accessor().delete(request).await
            }
        }
    };
}

macro_rules! reads {
    ($accessor:ident, $get:ty, $list:ty) => {
        async fn list(client: &Client, request: Value) -> Result<Page, Error> {
            let request: $list = json::from_value(request)?;
            let page = client.$accessor().list(request).await?;
            Ok(Page {
                items: page.items.iter().map(to_json).collect(),
                next_page_token: page.next_page_token,
                total_count: page.total_count,
            })
        }

        async fn get(client: &Client, request: Value) -> Result<Value, Error> {
            let request: $get = json::from_value(request)?;
            Ok(to_json(&client.$accessor().get(request).await?))
        }
    };
}

methods!(
    Groups,
    groups,
    iam::v2::GetGroupRequest,
    iam::v2::ListGroupsRequest,
    iam::v2::CreateGroupRequest,
    iam::v2::UpdateGroupRequest,
    iam::v2::DeleteGroupRequest
);
methods!(
    Roles,
    roles,
    iam::v2::GetRoleRequest,
    iam::v2::ListRolesRequest,
    iam::v2::CreateRoleRequest,
    iam::v2::UpdateRoleRequest,
    iam::v2::DeleteRoleRequest
);
methods!(
    Identities,
    identities,
    iam::v2::GetIdentityRequest,
    iam::v2::ListIdentitiesRequest,
    iam::v2::CreateIdentityRequest,
    iam::v2::UpdateIdentityRequest,
    iam::v2::DeleteIdentityRequest
);
methods!(
    RoleBindings,
    role_bindings,
    iam::v2::GetRoleBindingRequest,
    iam::v2::ListRoleBindingsRequest,
    iam::v2::CreateRoleBindingRequest,
    iam::v2::UpdateRoleBindingRequest,
    iam::v2::DeleteRoleBindingRequest
);
methods!(
    Repos,
    repos,
    registry::v2::GetRepoRequest,
    registry::v2::ListReposRequest,
    registry::v2::CreateRepoRequest,
    registry::v2::UpdateRepoRequest,
    registry::v2::DeleteRepoRequest
);
methods!(
    Artifacts,
    artifacts,
    libraries::v2::GetArtifactRequest,
    libraries::v2::ListArtifactsRequest,
    libraries::v2::CreateArtifactRequest,
    libraries::v2::UpdateArtifactRequest,
    libraries::v2::DeleteArtifactRequest
);
methods!(
    Documents,
    documents,
    advisory::v2::GetDocumentRequest,
    advisory::v2::ListDocumentsRequest,
    advisory::v2::CreateDocumentRequest,
    advisory::v2::UpdateDocumentRequest,
    advisory::v2::DeleteDocumentRequest
);
methods!(
    Advisories,
    advisories,
    vulnerabilities::v2::GetAdvisoryRequest,
    vulnerabilities::v2::ListAdvisoriesRequest
);

/// The collections, as named on the command line, and how each is called.
macro_rules! collections {
    ($($variant:ident $name:literal $body:literal;)*) => {
        /// A v2 collection.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
        pub enum Collection {
            $(#[value(name = $name)] $variant,)*
        }

        impl Collection {
            /// The name on the command line (`role-bindings`).
            pub fn name(self) -> &'static str {
                match self { $(Collection::$variant => $name,)* }
            }

            /// The request field holding the resource in creates and updates.
            pub fn body_field(self) -> &'static str {
                match self { $(Collection::$variant => $body,)* }
            }

            pub async fn list(self, client: &Client, request: Value) -> Result<Page, Error> {
                match self { $(Collection::$variant => $variant::list(client, request).await,)* }
            }

            pub async fn get(self, client: &Client, request: Value) -> Result<Value, Error> {
                match self { $(Collection::$variant => $variant::get(client, request).await,)* }
            }

            pub async fn create(self, client: &Client, request: Value) -> Result<Value, Error> {
                match self { $(Collection::$variant => $variant::create(client, request).await,)* }
            }

            pub async fn update(self, client: &Client, request: Value) -> Result<Value, Error> {
                match self { $(Collection::$variant => $variant::update(client, request).await,)* }
            }

            pub async fn delete(self, client: &Client, request: Value) -> Result<(), Error> {
                match self { $(Collection::$variant => $variant::delete(client, request).await,)* }
            }
        }
    };
}

collections! {
    Groups "groups" "group";
    Roles "roles" "role";
    Identities "identities" "identity";
    RoleBindings "role-bindings" "roleBinding";
    Repos "repos" "repo";
    Artifacts "artifacts" "artifact";
    Documents "documents" "document";
    Advisories "advisories" "advisory";
}
