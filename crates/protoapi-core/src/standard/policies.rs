//! access policies (`google.iam.v1.IAMPolicy`) over an API's role bindings.
//!
//! The policy of an item is the bindings stored directly under it: each
//! role (`roles/<key>`) with the members granted it (`identity:<key>`).
//! Setting one creates the bindings it adds and deletes those it drops
//! through the bindings' own generated Create and Delete, so a policy grants
//! nothing a binding could not (references in reach, no escalation,
//! capabilities); its etag is a digest of its bindings.

use std::collections::BTreeSet;

use prost::Message as _;
use prost_reflect::{DynamicMessage, ReflectMessage, Value};
use sha2::{Digest, Sha256};

use super::ApiContext;
use crate::auth::Need;
use crate::context::{Caller, Held};
use crate::error::{Code, Error, FieldViolation};
use crate::resource::{Reference, Resource};
use crate::store::{Hierarchy, ListQuery, OrderBy, Page, StoreError};

/// The most members one policy grants roles to (Google's limit).
pub const MAX_POLICY_MEMBERS: usize = 1_500;

/// The most permissions one `TestIamPermissions` asks about.
pub const MAX_TESTED_PERMISSIONS: usize = 100;

/// How a policy shows the bindings of `B`: the reference naming the role
/// granted, the one naming the member, and the kind of members
/// (`identity` in `identity:<key>`). Roles are named `<collection>/<key>`
/// after the role reference's collection.
#[derive(Clone, Copy, Debug)]
pub struct PolicyShape {
    pub role: &'static Reference,
    pub member: &'static Reference,
    pub member_kind: &'static str,
    /// What the bindings' Create and Delete need of their caller: a policy
    /// adding or dropping bindings is refused before any write without it.
    pub create: Need<'static>,
    pub delete: Need<'static>,
}

/// `google.iam.v1.Policy` on the wire; the generated crate's own message
/// is decoded from it. Audit configs are kept as bytes only to be refused.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WirePolicy {
    #[prost(int32, tag = "1")]
    pub version: i32,
    #[prost(bytes = "vec", tag = "3")]
    pub etag: Vec<u8>,
    #[prost(message, repeated, tag = "4")]
    pub bindings: Vec<WireBinding>,
    #[prost(bytes = "vec", repeated, tag = "6")]
    pub audit_configs: Vec<Vec<u8>>,
}

/// `google.iam.v1.Binding` on the wire; a condition is kept as bytes only
/// to be refused.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WireBinding {
    #[prost(string, tag = "1")]
    pub role: String,
    #[prost(string, repeated, tag = "2")]
    pub members: Vec<String>,
    #[prost(bytes = "vec", optional, tag = "3")]
    pub condition: Option<Vec<u8>>,
}

/// A role key and a member key: one grant of a policy.
type Grant = (String, String);

impl PolicyShape {
    fn role_prefix(&self) -> String {
        format!("{}/", self.role.collection)
    }

    fn member_prefix(&self) -> String {
        format!("{}:", self.member_kind)
    }

    /// The grant a stored binding makes.
    fn grant_of<B: Resource>(&self, binding: &B) -> Grant {
        let message = binding.transcode_to_dynamic();
        let text = |reference: &Reference| {
            let descriptor = message.descriptor();
            let value = descriptor
                .get_field_by_json_name(reference.field)
                .map(|field| message.get_field(&field).into_owned());
            match value {
                Some(Value::String(text)) => text,
                _ => String::new(),
            }
        };
        (text(self.role), text(self.member))
    }

    /// A new binding making `grant`.
    fn binding<B: Resource>(&self, (role, member): Grant) -> Result<B, Error> {
        let mut message: DynamicMessage = B::default().transcode_to_dynamic();
        for (reference, key) in [(self.role, role), (self.member, member)] {
            let field = message
                .descriptor()
                .get_field_by_json_name(reference.field)
                .ok_or_else(|| {
                    Error::internal(format!("{} has no `{}`", B::TYPE, reference.field))
                })?;
            message.set_field(&field, Value::String(key));
        }
        message.transcode_to().map_err(Error::internal)
    }

    /// The policy `bindings` make, encoded as `google.iam.v1.Policy`.
    pub fn policy<B: Resource>(&self, bindings: &[B]) -> Vec<u8> {
        let grants: BTreeSet<Grant> = bindings.iter().map(|b| self.grant_of(b)).collect();
        let mut policy = WirePolicy {
            version: 1,
            etag: etag(&grants),
            ..WirePolicy::default()
        };
        for (role, member) in grants {
            let role = format!("{}{role}", self.role_prefix());
            let member = format!("{}{member}", self.member_prefix());
            match policy.bindings.last_mut() {
                Some(last) if last.role == role => last.members.push(member),
                _ => policy.bindings.push(WireBinding {
                    role,
                    members: vec![member],
                    condition: None,
                }),
            }
        }
        policy.encode_to_vec()
    }
}

/// A digest of a policy's grants: what its etag is.
fn etag(grants: &BTreeSet<Grant>) -> Vec<u8> {
    let mut digest = Sha256::new();
    for (role, member) in grants {
        for part in [role, member] {
            digest.update((part.len() as u64).to_be_bytes());
            digest.update(part.as_bytes());
        }
    }
    digest.finalize()[..12].to_vec()
}

/// INVALID_ARGUMENT unless `version` is a policy format this server
/// answers (0, 1 or 3: policies here have no conditions, so all read alike).
pub fn check_policy_version(version: i32) -> Result<(), Error> {
    match version {
        0 | 1 | 3 => Ok(()),
        _ => Err(Error::invalid_field(
            "options.requestedPolicyVersion",
            format!("policy version {version} does not exist: ask for 1 or 3"),
        )),
    }
}

/// The bindings stored directly under `holder`, through `list` (the
/// bindings' store); FAILED_PRECONDITION beyond [`MAX_POLICY_MEMBERS`].
pub async fn policy_bindings<B: Resource, L: Future<Output = Result<Page<B>, StoreError>>>(
    holder: &str,
    list: impl FnOnce(ListQuery) -> L,
) -> Result<Vec<B>, Error> {
    let query = ListQuery {
        filter: Hierarchy::ChildrenOf(holder.to_owned()),
        matching: Default::default(),
        order_by: vec![OrderBy {
            field: "uid".to_owned(),
            descending: false,
        }],
        after: None,
        skip: 0,
        limit: MAX_POLICY_MEMBERS as u64 + 1,
        byte_budget: u64::MAX,
        public: None,
    };
    let page = list(query)
        .await
        .map_err(|error| super::store_error::<B>(error, "", holder))?;
    if page.items.len() > MAX_POLICY_MEMBERS {
        return Err(Error::failed_precondition(
            "POLICY_TOO_LARGE",
            format!(
                "`{holder}` holds more than {MAX_POLICY_MEMBERS} bindings, more than one policy \
                 shows: list them instead"
            ),
            Vec::new(),
        ));
    }
    Ok(page.items)
}

/// A policy a `SetIamPolicy` asks for, checked before authorization.
#[derive(Debug)]
pub struct PolicyRequest {
    grants: Vec<(Grant, usize, usize)>,
    etag: Vec<u8>,
}

impl PolicyRequest {
    /// Checks `policy` (the request's, encoded) and `update_mask` (its
    /// paths): roles and members named as [`PolicyShape`] names them, no
    /// conditions or audit configs, at most [`MAX_POLICY_MEMBERS`] members.
    pub fn parse(
        shape: &PolicyShape,
        policy: Option<Vec<u8>>,
        update_mask: Option<Vec<String>>,
    ) -> Result<PolicyRequest, Error> {
        let Some(policy) = policy else {
            return Err(Error::invalid_field(
                "policy",
                "the policy to set is required",
            ));
        };
        let policy = WirePolicy::decode(policy.as_slice()).map_err(Error::internal)?;
        let mut violations = Vec::new();
        for path in update_mask.iter().flatten() {
            if !matches!(path.as_str(), "bindings" | "etag") {
                violations.push(FieldViolation::new(
                    "updateMask",
                    format!("`{path}` cannot be set here: only `bindings` and `etag`"),
                ));
            }
        }
        if !policy.audit_configs.is_empty() {
            violations.push(FieldViolation::new(
                "policy.auditConfigs",
                "audit logging is not configured through policies here",
            ));
        }
        let members: usize = policy.bindings.iter().map(|b| b.members.len()).sum();
        if members > MAX_POLICY_MEMBERS {
            return Err(Error::invalid_field(
                "policy.bindings",
                format!("{members} members, more than the {MAX_POLICY_MEMBERS} a policy holds"),
            ));
        }
        let mut grants = Vec::new();
        for (at, binding) in policy.bindings.iter().enumerate() {
            let path = format!("policy.bindings[{at}]");
            if binding.condition.is_some() {
                violations.push(FieldViolation::new(
                    format!("{path}.condition"),
                    "conditional role bindings are not supported",
                ));
            }
            let Some(role) = named(&binding.role, &shape.role_prefix()) else {
                violations.push(FieldViolation::new(
                    format!("{path}.role"),
                    format!("name a role as `{}<key>`", shape.role_prefix()),
                ));
                continue;
            };
            for (index, member) in binding.members.iter().enumerate() {
                match named(member, &shape.member_prefix()) {
                    Some(member) => grants.push(((role.to_owned(), member.to_owned()), at, index)),
                    None => violations.push(FieldViolation::new(
                        format!("{path}.members[{index}]"),
                        format!("name a member as `{}<key>`", shape.member_prefix()),
                    )),
                }
            }
        }
        if !violations.is_empty() {
            return Err(Error::invalid_fields(violations));
        }
        Ok(PolicyRequest {
            grants,
            etag: policy.etag,
        })
    }

    /// Replaces the bindings under `holder` (read with `list`) by the
    /// requested ones: ABORTED when the request's etag is set and stale;
    /// PERMISSION_DENIED, before any write, unless `caller` may create
    /// (and, when some are dropped, delete) bindings there; else each missing grant is created with `create` (the bindings'
    /// Create; the first refused undoes those made before it, and its
    /// error names the policy's field), then each dropped binding deleted
    /// with `delete`. Answers the policy now in place, encoded.
    ///
    /// Policies of the same holder are set one at a time in this process
    /// (64 striped locks); a write by another process
    /// meanwhile (a replica on the same database) is found by reading the
    /// bindings again, and answered ABORTED (`POLICY_CHANGED`) rather than
    /// as a success the other write undid.
    pub async fn apply<B, L, C, D>(
        self,
        (context, caller): (&ApiContext, &Caller),
        shape: &PolicyShape,
        holder: &str,
        list: impl Fn(ListQuery) -> L,
        create: impl Fn(B) -> C,
        delete: impl Fn(String) -> D,
    ) -> Result<Vec<u8>, Error>
    where
        B: Resource,
        L: Future<Output = Result<Page<B>, StoreError>>,
        C: Future<Output = Result<B, Error>>,
        D: Future<Output = Result<(), Error>>,
    {
        let _one_at_a_time = stripe(holder).lock().await;
        let current = policy_bindings(holder, &list).await?;
        let grants: Vec<Grant> = current.iter().map(|b| shape.grant_of(b)).collect();
        let held: BTreeSet<Grant> = grants.iter().cloned().collect();
        if !self.etag.is_empty() && self.etag != etag(&held) {
            return Err(Error::new(
                Code::Aborted,
                "ETAG_MISMATCH",
                format!(
                    "the policy of `{holder}` changed since it was read (etag mismatch): read it again"
                ),
            ));
        }
        let wanted: BTreeSet<&Grant> = self.grants.iter().map(|(grant, ..)| grant).collect();
        // The caller's own bindings are dropped last: until then they still
        // allow the other deletes.
        let mut dropped: Vec<(&B, &Grant)> = (current.iter().zip(&grants))
            .filter(|(_, grant)| !wanted.contains(grant))
            .collect();
        dropped.sort_by_key(|(_, (_, member))| caller.uid() == Some(member.as_str()));
        if self.grants.iter().any(|(grant, ..)| !held.contains(grant)) {
            context.authorize(caller, shape.create, holder).await?;
        }
        if !dropped.is_empty() {
            context.authorize(caller, shape.delete, holder).await?;
        }
        let mut created: Vec<B> = Vec::new();
        let mut added = BTreeSet::new();
        for (grant, at, index) in &self.grants {
            if held.contains(grant) || !added.insert(grant) {
                continue;
            }
            match create(shape.binding(grant.clone())?).await {
                Ok(binding) => created.push(binding),
                Err(error) => {
                    for binding in created {
                        // Best effort: what cannot be undone stays visible in the policy.
                        let _ = delete(binding.key().to_owned()).await;
                    }
                    return Err(at_policy_field(error, shape, *at, *index));
                }
            }
        }
        for (binding, _) in dropped {
            match delete(binding.key().to_owned()).await {
                Err(error) if error.code() != Code::NotFound => return Err(error),
                _ => {}
            }
        }
        // The policy now in place: what was asked for, unless another
        // process wrote meanwhile.
        let now = policy_bindings(holder, &list).await?;
        let in_place: BTreeSet<Grant> = now.iter().map(|b| shape.grant_of(b)).collect();
        if in_place.iter().ne(wanted.iter().copied()) {
            return Err(Error::new(
                Code::Aborted,
                "POLICY_CHANGED",
                format!(
                    "the policy of `{holder}` was changed by another request while this one set it: \
                     read it again"
                ),
            ));
        }
        Ok(shape.policy(&now))
    }
}

/// How many locks policies of different holders share, at most: setting
/// one waits only for a policy of a holder hashing to the same lock, and
/// the locks cost the same whatever the number of holders.
const POLICY_STRIPES: usize = 64;

/// The lock of `holder`'s policy in this process.
fn stripe(holder: &str) -> &'static tokio::sync::Mutex<()> {
    use std::hash::{BuildHasher, RandomState};
    static STRIPES: [tokio::sync::Mutex<()>; POLICY_STRIPES] =
        [const { tokio::sync::Mutex::const_new(()) }; POLICY_STRIPES];
    // Keyed per process: which holders share a lock cannot be chosen.
    static KEYS: std::sync::LazyLock<RandomState> = std::sync::LazyLock::new(RandomState::new);
    let hash = KEYS.hash_one(holder);
    &STRIPES[(hash % POLICY_STRIPES as u64) as usize]
}

/// `text` without `prefix`, when it has it and something after it.
fn named<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.strip_prefix(prefix).filter(|key| !key.is_empty())
}

/// `error` of creating the grant of member `index` of binding `at`, its
/// field violations naming the policy's fields instead of the binding's.
fn at_policy_field(error: Error, shape: &PolicyShape, at: usize, index: usize) -> Error {
    if error.field_violations().is_empty() {
        return error;
    }
    let violations = error
        .field_violations()
        .iter()
        .map(|violation| {
            let field = if violation.field == shape.role.path {
                format!("policy.bindings[{at}].role")
            } else if violation.field == shape.member.path {
                format!("policy.bindings[{at}].members[{index}]")
            } else {
                violation.field.clone()
            };
            FieldViolation::new(field, violation.description.clone())
        })
        .collect();
    Error::invalid_fields(violations)
}

/// The values of `permissions` that `caller` holds on `resource`, in
/// order, each once: what `TestIamPermissions` answers. Needs a token;
/// says nothing of whether `resource` exists.
pub async fn tested_permissions(
    context: &ApiContext,
    caller: &Caller,
    resource: &str,
    permissions: Vec<String>,
) -> Result<Vec<String>, Error> {
    if permissions.len() > MAX_TESTED_PERMISSIONS {
        return Err(Error::invalid_field(
            "permissions",
            format!("at most {MAX_TESTED_PERMISSIONS} permissions are tested at once"),
        ));
    }
    if let Some(at) = permissions
        .iter()
        .position(|p| p.is_empty() || p.contains('*'))
    {
        return Err(Error::invalid_field(
            format!("permissions[{at}]"),
            "name one permission, without wildcards",
        ));
    }
    context.authorize(caller, Need::Token, resource).await?;
    let held = context.authorizer.held(caller, resource).await?;
    let mut answered: Vec<String> = Vec::new();
    for permission in permissions {
        let holds = match &held {
            Held::All => true,
            Held::Only(held) => held.contains(&permission),
        };
        if holds && !answered.contains(&permission) {
            answered.push(permission);
        }
    }
    Ok(answered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::Reach;

    static ROLE: Reference = Reference {
        field: "role",
        path: "binding.role",
        collection: "roles",
        resource_type: "example.com/Role",
        reach: Reach::Ancestors,
    };
    static MEMBER: Reference = Reference {
        field: "member",
        path: "binding.member",
        collection: "members",
        resource_type: "example.com/Member",
        reach: Reach::Root,
    };
    const SHAPE: PolicyShape = PolicyShape {
        role: &ROLE,
        member: &MEMBER,
        member_kind: "member",
        create: Need::Token,
        delete: Need::Token,
    };

    fn binding(role: &str, members: &[&str]) -> WireBinding {
        WireBinding {
            role: role.to_owned(),
            members: members.iter().map(|m| m.to_string()).collect(),
            condition: None,
        }
    }

    fn parse(policy: WirePolicy, mask: Option<&[&str]>) -> Result<PolicyRequest, Error> {
        let mask = mask.map(|paths| paths.iter().map(|p| p.to_string()).collect());
        PolicyRequest::parse(&SHAPE, Some(policy.encode_to_vec()), mask)
    }

    fn fields(error: Error) -> Vec<String> {
        error
            .field_violations()
            .iter()
            .map(|v| v.field.clone())
            .collect()
    }

    #[test]
    fn a_policy_names_roles_and_members_as_the_shape_does() {
        let policy = WirePolicy {
            bindings: vec![
                binding("roles/r1", &["member:m1", "member:m2"]),
                binding("r2", &["member:m1"]),
                binding("roles/r3", &["m3", "member:"]),
            ],
            ..WirePolicy::default()
        };
        let error = parse(policy, None).unwrap_err();
        assert_eq!(
            fields(error),
            [
                "policy.bindings[1].role",
                "policy.bindings[2].members[0]",
                "policy.bindings[2].members[1]",
            ]
        );
        let policy = WirePolicy {
            bindings: vec![binding("roles/r1", &["member:m1", "member:m2"])],
            etag: vec![1, 2],
            ..WirePolicy::default()
        };
        let parsed = parse(policy, Some(&["bindings", "etag"])).unwrap();
        let grants: Vec<&Grant> = parsed.grants.iter().map(|(grant, ..)| grant).collect();
        assert_eq!(
            grants,
            [
                &("r1".to_owned(), "m1".to_owned()),
                &("r1".to_owned(), "m2".to_owned())
            ]
        );
        assert_eq!(parsed.etag, [1, 2]);
    }

    #[test]
    fn what_policies_here_cannot_hold_is_refused_by_field() {
        let mut conditional = binding("roles/r1", &["member:m1"]);
        conditional.condition = Some(Vec::new());
        let policy = WirePolicy {
            bindings: vec![conditional],
            audit_configs: vec![Vec::new()],
            ..WirePolicy::default()
        };
        let error = parse(policy, Some(&["auditConfigs"])).unwrap_err();
        assert_eq!(
            fields(error),
            [
                "updateMask",
                "policy.auditConfigs",
                "policy.bindings[0].condition"
            ]
        );
        let missing = PolicyRequest::parse(&SHAPE, None, None).unwrap_err();
        assert_eq!(fields(missing), ["policy"]);
        let members: Vec<String> = (0..=MAX_POLICY_MEMBERS)
            .map(|i| format!("member:{i}"))
            .collect();
        let members: Vec<&str> = members.iter().map(String::as_str).collect();
        let policy = WirePolicy {
            bindings: vec![binding("roles/r1", &members)],
            ..WirePolicy::default()
        };
        assert_eq!(
            fields(parse(policy, None).unwrap_err()),
            ["policy.bindings"]
        );
    }

    #[test]
    fn the_etag_is_a_digest_of_the_grants_alone() {
        let grants = |pairs: &[(&str, &str)]| -> BTreeSet<Grant> {
            pairs
                .iter()
                .map(|(r, m)| (r.to_string(), m.to_string()))
                .collect()
        };
        let one = etag(&grants(&[("r1", "m1"), ("r2", "m2")]));
        assert_eq!(
            one,
            etag(&grants(&[("r2", "m2"), ("r1", "m1"), ("r1", "m1")]))
        );
        assert_ne!(one, etag(&grants(&[("r1", "m1")])));
        // Parts are length-prefixed: moving a boundary changes the digest.
        assert_ne!(
            etag(&grants(&[("r1", "m1")])),
            etag(&grants(&[("r", "1m1")]))
        );
        assert_eq!(one.len(), 12);
    }

    #[test]
    fn only_known_policy_versions_are_read() {
        for version in [0, 1, 3] {
            check_policy_version(version).unwrap();
        }
        for version in [-1, 2, 4] {
            let error = check_policy_version(version).unwrap_err();
            assert_eq!(fields(error), ["options.requestedPolicyVersion"]);
        }
    }
}
