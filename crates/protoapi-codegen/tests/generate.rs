//! The generator against the real contract and against broken inputs.

use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_owned()
}

fn config_for(proto: &Path) -> protoapi_codegen::Config {
    let mut config = protoapi_codegen::Config::new();
    // As the CLI does (its `--title` and `--cli-feature` defaults).
    config.include(proto).title("Platform API").cli("cli");
    config.files_under(proto).unwrap();
    config
}

/// Mirrors `cargo run -p protoapi-codegen -- check`: the checked-in crate is what the protos produce.
#[test]
fn checked_in_crate_is_up_to_date() {
    let (differing, warnings) = config_for(&workspace().join("platform/proto"))
        .check(workspace().join("platform/platform-api/src"))
        .unwrap();
    assert!(
        warnings.is_empty(),
        "the Platform API is served as declared:\n{}",
        warnings.render(&workspace())
    );
    assert!(
        differing.is_empty(),
        "platform/platform-api/src is stale ({differing:?}); run `cargo run -p protoapi-codegen -- generate --proto platform/proto --out platform/platform-api/src`"
    );
}

#[test]
fn generation_is_deterministic() {
    let config = config_for(&workspace().join("platform/proto"));
    assert_eq!(config.generate().unwrap(), config.generate().unwrap());
}

/// Copies `proto/` to a temporary directory for editing.
fn proto_copy() -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy(&path, &target);
            } else {
                fs::copy(&path, &target).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy(&workspace().join("platform/proto"), dir.path());
    dir
}

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} does not contain {from:?}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// Asserts that generation fails, with an error containing `expected`,
/// once `from` is edited into `to` in `file` of a copy of the protos.
fn assert_reported(file: &str, from: &str, to: &str, expected: &str) {
    let dir = proto_copy();
    edit(dir.path(), file, from, to);
    let error = config_for(dir.path()).generate().expect_err(to).to_string();
    assert!(
        error.contains(expected),
        "for {to:?}:\n  expected {expected:?}\n  got {error:?}"
    );
}

fn generated_text(dir: &Path, file: &str) -> String {
    let output = config_for(dir).generate().unwrap_or_else(|e| panic!("{e}"));
    String::from_utf8(output[Path::new(file)].clone()).unwrap()
}

#[test]
fn proto_comments_become_doc_comments() {
    let dir = proto_copy();
    edit(
        dir.path(),
        "platform/iam/v2/groups.proto",
        "// Returns one group.",
        "// Returns one group, freshly documented.",
    );
    edit(
        dir.path(),
        "platform/iam/v2/groups.proto",
        "// A human-readable name.",
        "// The group's display name.",
    );
    let api = generated_text(dir.path(), "platform.iam.v2.api.rs");
    assert!(
        api.contains("/// Returns one group, freshly documented."),
        "service method docs"
    );
    let messages = generated_text(dir.path(), "platform.iam.v2.rs");
    assert!(
        messages.contains("/// The group's display name."),
        "message field docs"
    );
    assert!(
        messages.contains("/// Returns one group, freshly documented."),
        "tonic docs"
    );
}

/// Each broken input yields `file:line:col: message`.
#[test]
fn broken_inputs_are_reported_with_positions() {
    let cases = [
        (
            r#"get: "/iam/v2/groups/{uid=**}"}"#,
            r#"get: "/iam/v2/groups/{uid=**}/x"}"#,
            "platform/iam/v2/groups.proto:28:3: bad path template `/iam/v2/groups/{uid=**}/x` of `GetGroup` at column 21: `**` must be the last segment",
        ),
        (
            r#"get: "/iam/v2/groups/{uid=**}"}"#,
            r#"get: "/iam/v2/groups/{missing=**}"}"#,
            "platform/iam/v2/groups.proto:28:3: path variable `missing` of `GetGroup` names no string, integer or enum field",
        ),
        (
            "post: \"/iam/v2/groups/{parent=**}\"\n      body: \"group\"",
            "post: \"/iam/v2/groups/{parent=**}\"\n      body: \"grup\"",
            "platform/iam/v2/groups.proto:20:3: `body: \"grup\"` of `CreateGroup` names no field",
        ),
        (
            "type: \"iam.platform/Group\"",
            "type: \"nogroup\"",
            "platform/iam/v2/groups.proto:76:1: resource `platform.iam.v2.Group` needs a `type`",
        ),
    ];
    for (from, to, expected) in cases {
        assert_reported("platform/iam/v2/groups.proto", from, to, expected);
    }
}

/// Annotation mistakes fail generation with the file and line.
#[test]
fn annotation_typos_are_reported_with_positions() {
    let file = "platform/iam/v2/annotations.toml";
    let cases = [
        (
            r#"order_by = ["name", "createTime", "updateTime"]"#,
            r#"order_by = ["name", "colour"]"#,
            "platform/iam/v2/annotations.toml:4:21: `order_by` names `colour`, which is not a field of `platform.iam.v2.Group`",
        ),
        (
            "[groups]",
            "[grups]",
            "platform/iam/v2/annotations.toml:3:2: unknown collection `grups`",
        ),
        (
            "page_size = { default = 50, max = 200 }",
            "page_size = { default = 50, max = 200 }\nindexed = [\"colour\"]",
            "`indexed` names `colour`, which is not a field of `platform.iam.v2.Group`",
        ),
        (
            "page_size = { default = 50, max = 200 }",
            "page_size = { default = 50, max = 200 }\nindexed = [\"description\"]",
            "`indexed` names `description`, which `groups` cannot be filtered by (filterable: name, createTime, updateTime)",
        ),
        (
            "page_size = { default = 50, max = 200 }",
            "page_size = { default = 50, max = 200 }\nfilterable = [\"resourceLimits.clusters.x\"]",
            "`resourceLimits.clusters.x` of `groups` cannot be filtered by: filters reach fields at most one message down",
        ),
        (
            "page_size = { default = 50, max = 200 }",
            "page_size = { default = 50, max = 200 }\nfilterable = [\"resourceLimits\"]",
            "`resourceLimits` of `groups` cannot be filtered by: the values of `resource_limits` cannot be compared",
        ),
        (
            "page_size = { default = 50, max = 200 }",
            "page_size = { default = 50, max = 200 }\nfilterable = [\"resource_limits.seats\"]",
            "`resource_limits.seats` of `groups` cannot be filtered by: `seats` is not a field of `platform.iam.v2.ResourceLimits`",
        ),
        (
            "page_size = { default = 50, max = 200 }",
            "page_size = { default = 50, max = 200 }\nmixins = [\"google.iam.v1.IAMPolicies\"]",
            "unknown mixin `google.iam.v1.IAMPolicies` (mixins: google.iam.v1.IAMPolicy)",
        ),
        (
            "[roles]\n",
            "[roles]\nmixins = [\"google.iam.v1.IAMPolicy\"]\n",
            "`google.iam.v1.IAMPolicy` is mixed into `roles`, but policies are kept on `groups` (the collection `roleBindings` are stored under): mix it into `groups`",
        ),
        (
            "page_size = { default = 50, max = 200 }",
            "pagesize = { default = 50, max = 200 }",
            "platform/iam/v2/annotations.toml:5:1: unknown field `pagesize`",
        ),
        (
            r#"{ collection = "repos" },"#,
            r#"{ collection = "repositories" },"#,
            "`delete_blocked_by` names unknown collection `repositories`",
        ),
        (
            r#"{ collection = "roleBindings", field = "role" }"#,
            r#"{ collection = "roleBindings", field = "rolle" }"#,
            "`delete_blocked_by` names `rolle`, which is not a string field of `platform.iam.v2.RoleBinding`",
        ),
        (
            "[roles]\n",
            "[groups.permissions]\nCreateGrop = \"groups.create\"\n\n[roles]\n",
            "`permissions` names `CreateGrop`, which is not a method on `groups`",
        ),
        (
            "[roleBindings.fields.role]",
            "[roleBindings.fields.rol]",
            "`fields` names `rol`, which is not a field",
        ),
        (
            r#"filters = ["children_of", "descendants_of", "ancestors_of""#,
            r#"filters = ["parent_of""#,
            "unknown filter `parent_of`",
        ),
        (
            r#"reach = "root""#,
            r#"reach = "planet""#,
            "unknown reach `planet` (reaches: ancestors, root)",
        ),
        (
            r#"grants = "capabilities""#,
            r#"grants = "name""#,
            "`grants` names `name`, which is not a repeated string field of `platform.iam.v2.Role`",
        ),
        (
            r#"collection = "identities"
reach"#,
            r#"collection = "identitys"
reach"#,
            "`references` names unknown collection `identitys`",
        ),
        (
            "[roleBindings.references.role]",
            "[roleBindings.references.name]",
            "platform/iam/v2/annotations.toml:83:26: reference field `name` must be IMMUTABLE",
        ),
        (
            "[roleBindings.references.role]",
            "[roleBindings.references.colour]",
            "`references` names `colour`, which is not a string field of `platform.iam.v2.RoleBinding`",
        ),
    ];
    for (from, to, expected) in cases {
        assert_reported(file, from, to, expected);
    }
}

/// `public_after` names a timestamp field outside a oneof, and a collection
/// states one public rule; mistakes fail generation at their line.
#[test]
fn public_rule_mistakes_are_reported_with_positions() {
    let file = "platform/advisory/v2/annotations.toml";
    let rule = r#"public_after = "published""#;
    let cases = [
        (
            r#"public_after = "title""#,
            "platform/advisory/v2/annotations.toml:8:16: `public_after` names `title`, which is not a `google.protobuf.Timestamp` field of `platform.advisory.v2.Document`",
        ),
        (
            r#"public_after = "publishd""#,
            "`public_after` names `publishd`, which is not a `google.protobuf.Timestamp` field",
        ),
        (
            "public_if = \"published\"",
            "`public_if` names `published`, which is not a bool field of `platform.advisory.v2.Document`",
        ),
        (
            "public_if = \"public\"\npublic_after = \"published\"",
            "platform/advisory/v2/annotations.toml:9:16: a collection states one rule for public items: `public_if` or `public_after`, not both",
        ),
    ];
    for (to, expected) in cases {
        assert_reported(file, rule, to, expected);
    }
}

/// Legacy mappings that do not fit fail generation at the offending line.
#[test]
fn legacy_mapping_mistakes_are_reported_with_positions() {
    let cases = [
        (
            "platform/iam/v1/annotations.toml",
            r#"created_at = "create_time""#,
            r#"created_at = "created_time""#,
            "platform/iam/v1/annotations.toml:5:37: `rename` names `created_time`, which is not a field of `platform.iam.v2.Group`",
        ),
        (
            "platform/iam/v1/annotations.toml",
            r#"message = "platform.iam.v1.Group""#,
            r#"message = "platform.iam.v1.Grop""#,
            "platform/iam/v1/annotations.toml:4:11: `message` names `platform.iam.v1.Grop`, which is not a message",
        ),
        (
            "platform/iam/v1/groups.proto",
            "string description = 5",
            "int32 description = 5",
            "platform/iam/v1/groups.proto:69:3: `platform.iam.v1.Group.description` is `int32` but the field it shows, \
             `platform.iam.v2.Group.description`, is `string`",
        ),
        (
            "platform/iam/v1/groups.proto",
            "string description = 5",
            "string colour = 5",
            "platform/iam/v1/groups.proto:69:3: `platform.iam.v1.Group.colour` shows no field of `platform.iam.v2.Group`",
        ),
        (
            "platform/iam/v1/annotations.toml",
            r#"filters = ["id", "name""#,
            r#"filters = ["uid", "name""#,
            "platform/iam/v1/annotations.toml:6:12: unknown filter `uid`",
        ),
    ];
    for (file, from, to, expected) in cases {
        assert_reported(file, from, to, expected);
    }
}

/// The depth of the hierarchy is one declaration for the whole API, within
/// what keeps uids short enough to index.
#[test]
fn depth_mistakes_are_reported_with_positions() {
    let cases = [
        (
            "platform/annotations.toml",
            "max_depth = 16",
            "max_depth = 0",
            "platform/annotations.toml:8:13: `max_depth` must be 1 to 64",
        ),
        (
            "platform/annotations.toml",
            "max_depth = 16",
            "max_depth = 65",
            "platform/annotations.toml:8:13: `max_depth` must be 1 to 64",
        ),
        (
            "platform/iam/v2/annotations.toml",
            "shared = true\norder_by",
            "shared = true\nmax_depth = 4\norder_by",
            "platform/iam/v2/annotations.toml:24:13: `max_depth` bounds the whole hierarchy",
        ),
    ];
    for (file, from, to, expected) in cases {
        assert_reported(file, from, to, expected);
    }
}

#[test]
fn field_rules_become_value_checks() {
    let api = generated_text(
        &workspace().join("platform/proto"),
        "platform.iam.v2.api.rs",
    );
    assert!(
        api.contains("const TEXT_RULES") && api.contains("caller_must_hold: true"),
        "roles.capabilities allow-list and role binding UIDPs"
    );
    assert!(
        api.contains("max_length: Some(63)"),
        "the `*` rules reach every collection with a name"
    );
    assert!(
        api.contains("Requires the `groups.create` capability."),
        "permissions document methods"
    );
    assert!(
        api.contains("const MAX_DEPTH: usize = 16;") && api.contains("const SHARED: bool = true;"),
        "the declared depth and the shared collections"
    );
}

/// The capability a generated method of the service requires, read from its
/// documentation and checked against its authorization.
fn capability_of<'a>(api: &'a str, method: &str) -> &'a str {
    let at = api
        .find(&format!("pub async fn {method}("))
        .unwrap_or_else(|| panic!("no method `{method}`"));
    let doc = &api[..at];
    let start = doc
        .rfind("Requires the `")
        .expect("documents its capability")
        + "Requires the `".len();
    let capability = &doc[start..start + doc[start..].find('`').unwrap()];
    let body = &api[at..];
    let body = &body[..body[1..]
        .find("pub async fn")
        .map_or(body.len(), |end| end + 1)];
    assert!(
        body.contains(&format!("Need::Capability(\"{capability}\")")),
        "`{method}` authorizes `{capability}`"
    );
    capability
}

/// A standard method needs `<collection>.<verb>` unless its collection's
/// `permissions` state otherwise, method by method.
#[test]
fn permissions_default_to_collection_and_verb() {
    let dir = proto_copy();
    let file = "platform/iam/v2/annotations.toml";
    let text = fs::read_to_string(dir.path().join(file)).unwrap();
    assert!(
        !text.contains(".permissions]"),
        "{file} states only defaults"
    );
    edit(
        dir.path(),
        file,
        "[roles]\n",
        "[groups.permissions]\nDeleteGroup = \"groups.admin\"\n\n[roles]\n",
    );
    let api = generated_text(dir.path(), "platform.iam.v2.api.rs");
    // No table: every method has its default.
    for (method, capability) in [
        ("create_role_binding", "roleBindings.create"),
        ("get_role_binding", "roleBindings.get"),
        ("list_role_bindings", "roleBindings.list"),
        ("update_role_binding", "roleBindings.update"),
        ("delete_role_binding", "roleBindings.delete"),
    ] {
        assert_eq!(capability_of(&api, method), capability);
    }
    // A partial table: the stated method as stated, the others by default.
    for (method, capability) in [
        ("create_group", "groups.create"),
        ("get_group", "groups.get"),
        ("list_groups", "groups.list"),
        ("update_group", "groups.update"),
        ("delete_group", "groups.admin"),
    ] {
        assert_eq!(capability_of(&api, method), capability);
    }
    // A legacy version's method shares the current one's permission.
    let v1 = generated_text(dir.path(), "platform.iam.v1.api.rs");
    assert_eq!(capability_of(&v1, "delete_group"), "groups.admin");
    assert_eq!(capability_of(&v1, "list_groups"), "groups.list");
}

/// The CLI exits non-zero and prints diagnostics with `file:line:col` on
/// broken input (rendered as rustc does: see tests/diagnostics.rs).
#[test]
fn cli_check_fails_with_positions_on_broken_input() {
    let dir = proto_copy();
    edit(
        dir.path(),
        "platform/iam/v2/groups.proto",
        r#"body: "group""#,
        r#"body: "grup""#,
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_protoapi-codegen"))
        .arg("check")
        .arg("--proto")
        .arg(dir.path())
        .arg("--out")
        .arg(workspace().join("platform/platform-api/src"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("error: `body: \"grup\"` of `CreateGroup` names no field")
            && stderr.contains("platform/iam/v2/groups.proto:20:3\n"),
        "{stderr}"
    );
}

/// The fields of a row type's struct, in order (`name: String`, ...).
fn row_fields(api: &str, row: &str) -> Vec<String> {
    let start = api
        .find(&format!("pub struct {row} {{"))
        .unwrap_or_else(|| panic!("no `{row}`"));
    let body = &api[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    body.lines()
        .map(str::trim)
        .filter_map(|line| line.strip_prefix("pub "))
        .map(|field| field.trim_end_matches(',').to_owned())
        .collect()
}

/// Row types keep in columns exactly the fields the annotations look up.
#[test]
fn storage_rows_keep_the_fields_rules_look_up() {
    let proto = workspace().join("platform/proto");
    let iam = generated_text(&proto, "platform.iam.v2.api.rs");
    assert_eq!(
        row_fields(&iam, "RoleBindingRow"),
        [
            "name: String",
            "create_time: i64",
            "update_time: i64",
            "identity: String",
            "role: String"
        ],
        "order_by, then references and the fields dependents are found by"
    );
    let registry = generated_text(&proto, "platform.registry.v2.api.rs");
    assert!(row_fields(&registry, "RepoRow").contains(&"public: bool".to_owned()));

    let dir = proto_copy();
    let file = "platform/libraries/v2/annotations.toml";
    edit(
        dir.path(),
        file,
        r#"order_by = ["name", "createTime", "updateTime"]"#,
        r#"order_by = ["versionCount", "createTime"]"#,
    );
    let libraries = generated_text(dir.path(), "platform.libraries.v2.api.rs");
    assert_eq!(
        row_fields(&libraries, "ArtifactRow"),
        ["version_count: i64", "create_time: i64", "name: String"],
        "order_by in its order, then the name filter's field"
    );
}

/// The tables list marks where access decisions derive from: the target
/// of a reference that grants capabilities, and the holder by its other
/// reference; without one, generation fails at the holder's table.
#[test]
fn tables_guard_access_where_references_grant_capabilities() {
    let services = generated_text(&workspace().join("platform/proto"), "services.rs");
    assert!(services.contains("RoleRow>()\n            .guarding_access()"));
    assert!(services.contains("RoleBindingRow>()\n            .guarding_access_of(\"identity\")"));
    assert_reported(
        "platform/iam/v2/annotations.toml",
        "[roleBindings.references.identity]\ncollection = \"identities\"\nreach = \"root\"",
        "",
        "platform/iam/v2/annotations.toml:68:2: `roleBindings` grants the capabilities of its reference `role`: it needs exactly one other reference, naming whom they are granted to (it has 0)",
    );
}

/// Copies `from` into `to`, leaving out directories named `expected`.
fn copy_protos(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name != "expected") {
                copy_protos(&path, &target);
            }
        } else {
            fs::copy(&path, &target).unwrap();
        }
    }
}

/// The command line takes `--proto` and `--out` from the current directory,
/// as an installed tool would, not from the workspace it was built in; a
/// `google.*` API with `google.type` fields and no annotation file is
/// generated whole. (`.ci/any-directory.sh` also builds and tests the crate.)
#[test]
fn cli_resolves_paths_against_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = workspace().join("crates/protoapi-codegen/tests/fixtures/google_package");
    copy_protos(&fixture, &dir.path().join("protos"));
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_protoapi-codegen"))
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let generated = run(&["generate", "--proto", "protos", "--out", "src"]);
    let stderr = String::from_utf8_lossy(&generated.stderr);
    assert!(generated.status.success(), "{stderr}");
    let written = |file: &str| fs::read_to_string(dir.path().join("src").join(file)).unwrap();
    assert!(written("lib.rs").contains("pub mod example"));
    assert!(written("google.type.api.rs").contains("impl JsonMessage for LatLng"));
    assert!(written("google.rpc.api.rs").contains("impl JsonMessage for Status"));
    assert!(written("google.example.library.v1.api.rs").contains("pub struct LibraryServiceApi"));
    let checked = run(&["check", "--proto", "protos", "--out", "src"]);
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );

    // The workspace's defaults name nothing here: an error, not its tree.
    let defaults = run(&["check"]);
    assert!(!defaults.status.success());
    let stderr = String::from_utf8_lossy(&defaults.stderr);
    assert!(
        stderr.contains("`--proto proto`: no such directory"),
        "{stderr}"
    );
}

/// What generating a small API produced: the files' text and the rendered
/// warnings.
struct Generated {
    output: protoapi_codegen::Output,
    warnings: String,
}

impl Generated {
    fn text(&self, file: &str) -> String {
        String::from_utf8(self.output[Path::new(file)].clone()).unwrap()
    }
}

/// Generates the API of `api`'s protos (path, text), written into a temporary
/// tree, with `vendor`'s in a tree only imported from; `configure` sets more
/// options. Panics when generation fails.
fn generate_protos(
    api: &[(&str, &str)],
    vendor: &[(&str, &str)],
    configure: impl FnOnce(&mut protoapi_codegen::Config),
) -> Generated {
    let dir = tempfile::tempdir().unwrap();
    let (api_root, vendor_root) = (dir.path().join("api"), dir.path().join("vendor"));
    for (root, files) in [(&api_root, api), (&vendor_root, vendor)] {
        fs::create_dir_all(root).unwrap();
        for (path, text) in files {
            let path = root.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
    }
    let mut config = protoapi_codegen::Config::new();
    config.include(&api_root).include(&vendor_root);
    configure(&mut config);
    config.files_under(&api_root).unwrap();
    let (output, warnings) = config.generate_with_warnings().expect("the API generates");
    let warnings = warnings.render(dir.path());
    Generated { output, warnings }
}

/// An imported file gives its messages, never its services: a vendored
/// service without HTTP rules (as `google.longrunning.Operations` has
/// methods without) neither fails generation nor is served.
#[test]
fn imported_services_are_not_part_of_the_api() {
    let jobs = r#"syntax = "proto3";
package acme.jobs.v1;
// Runs jobs; its methods have no HTTP rules.
service Jobs {
  rpc WaitJob(Job) returns (Job);
}
message Job {
  string id = 1;
}
"#;
    let shop = r#"syntax = "proto3";
package shop.v1;
import "acme/jobs/v1/jobs.proto";
import "google/api/annotations.proto";
// Ships orders.
service Shipping {
  // Ships an order, answering the job that ships it.
  rpc Ship(ShipRequest) returns (acme.jobs.v1.Job) {
    option (google.api.http) = {post: "/v1/orders:ship" body: "*"};
  }
}
message ShipRequest {
  string order = 1;
}
"#;
    let generated = generate_protos(
        &[("shop/v1/shop.proto", shop)],
        &[("acme/jobs/v1/jobs.proto", jobs)],
        |_| {},
    );
    let services = generated.text("services.rs");
    assert!(services.contains("shop.v1.Shipping"), "{services}");
    assert!(!services.contains("acme.jobs.v1.Jobs"), "{services}");
    assert!(
        generated
            .text("acme.jobs.v1.api.rs")
            .contains("impl JsonMessage for Job")
    );
}

/// A vendored copy of a common proto is read only when imported, while an API
/// in a subdirectory of a vendored directory (`google/api/apikeys/v2`) is
/// generated like any other.
#[test]
fn apis_below_vendored_directories_are_generated() {
    let vendored = "syntax = \"proto3\";\npackage google.api;\nservice Vendored {}\n";
    let keys = r#"syntax = "proto3";
package google.api.keys.v1;
import "google/api/annotations.proto";
// Answers keys.
service Keys {
  // Looks a key up.
  rpc LookupKey(LookupKeyRequest) returns (LookupKeyResponse) {
    option (google.api.http) = {get: "/v1/keys:lookup"};
  }
}
message LookupKeyRequest {
  string key_string = 1;
}
message LookupKeyResponse {
  string name = 1;
}
"#;
    let generated = generate_protos(
        &[
            ("google/api/vendored.proto", vendored),
            ("google/api/keys/v1/keys.proto", keys),
        ],
        &[],
        |_| {},
    );
    let services = generated.text("services.rs");
    assert!(services.contains("google.api.keys.v1.Keys"), "{services}");
    assert!(!services.contains("Vendored"), "{services}");
}

/// A common message reached only as a map's values (`map<string,
/// google.rpc.Status>`) gets its JSON impl like one held in a plain field.
#[test]
fn messages_reached_through_map_values_are_generated() {
    let generated = generate_protos(
        &[(
            "shop/v1/shop.proto",
            r#"syntax = "proto3";
package shop.v1;
import "google/api/annotations.proto";
import "google/rpc/status.proto";
// Ships orders.
service Shipping {
  // Ships orders, answering each one's outcome.
  rpc Ship(ShipRequest) returns (ShipResponse) {
    option (google.api.http) = {post: "/v1/orders:ship" body: "*"};
  }
}
message ShipRequest {
  repeated string orders = 1;
}
message ShipResponse {
  map<string, google.rpc.Status> failed = 1;
}
"#,
        )],
        &[],
        |_| {},
    );
    let rpc = generated.text("google.rpc.api.rs");
    assert!(rpc.contains("impl JsonMessage for Status"), "{rpc}");
}

/// `Client::connection()` keeps its name beside a service reached as
/// `connection` (`ConnectionService`), which is reached by its full name.
#[test]
fn a_service_named_like_a_client_method_keeps_its_full_name() {
    let generated = generate_protos(
        &[(
            "link/v1/link.proto",
            r#"syntax = "proto3";
package link.v1;
import "google/api/annotations.proto";
// Manages connections.
service ConnectionService {
  // Checks a connection.
  rpc Check(CheckRequest) returns (CheckResponse) {
    option (google.api.http) = {post: "/v1/connections:check" body: "*"};
  }
}
message CheckRequest {
  string target = 1;
}
message CheckResponse {
  bool ok = 1;
}
"#,
        )],
        &[],
        |_| {},
    );
    let client = generated.text("client.rs");
    assert_eq!(client.matches("pub fn connection(").count(), 1, "{client}");
    assert!(client.contains("pub fn connection_service("), "{client}");
}

/// prost keeps the nested types of a message `Api` in `pub mod api`: the
/// package's generated API goes in a module of another name.
#[test]
fn a_message_named_api_keeps_its_module() {
    let generated = generate_protos(
        &[(
            "gateway/v1/gateway.proto",
            r#"syntax = "proto3";
package gateway.v1;
import "google/api/annotations.proto";
// Serves APIs.
service Gateway {
  // Describes an API.
  rpc DescribeApi(Api) returns (Api) {
    option (google.api.http) = {post: "/v1/apis:describe" body: "*"};
  }
}
message Api {
  enum State {
    STATE_UNSPECIFIED = 0;
    ACTIVE = 1;
  }
  State state = 1;
}
"#,
        )],
        &[],
        |_| {},
    );
    let root = generated.text("lib.rs");
    assert!(root.contains("mod generated_api {"), "{root}");
    assert!(root.contains("pub use generated_api::*;"), "{root}");
}

/// Two resources of one package with one plural (`models/{model}` and
/// `publishers/{publisher}/models/{model}`), each the collection of its own
/// service: the CLI qualifies their command names by their kinds, numbers
/// a third of the same kind in another package, and the client reaches each
/// service by its own name.
#[test]
fn collections_sharing_a_plural_get_distinct_names() {
    let service = |service: &str, message: &str, pattern: &str, path: &str| {
        format!(
            r#"
// Serves {message}.
service {service} {{
  // Returns one.
  rpc Get{message}(Get{message}Request) returns ({message}) {{
    option (google.api.http) = {{get: "/v1/{{name={path}}}"}};
  }}
}}
message {message} {{
  option (google.api.resource) = {{
    type: "ml.example/{message}"
    pattern: "{pattern}"
  }};
  string name = 1;
}}
message Get{message}Request {{
  string name = 1;
}}
"#
        )
    };
    let ml = format!(
        "syntax = \"proto3\";\npackage ml.v1;\nimport \"google/api/annotations.proto\";\n\
             import \"google/api/resource.proto\";\n{}{}",
        service("ModelService", "Model", "models/{model}", "models/*"),
        service(
            "ModelGardenService",
            "PublisherModel",
            "publishers/{publisher}/models/{model}",
            "publishers/*/models/*"
        ),
    );
    // One kind in two packages: still alike once qualified.
    let extra = format!(
        "syntax = \"proto3\";\npackage ml.extra.v1;\nimport \"google/api/annotations.proto\";\n\
             import \"google/api/resource.proto\";\n{}",
        service(
            "ExtraService",
            "Model",
            "extras/{extra}/models/{model}",
            "extras/*/models/*"
        )
    )
    .replace("ml.example/", "extra.example/");
    let generated = generate_protos(
        &[("ml/v1/ml.proto", &ml), ("ml/extra/v1/extra.proto", &extra)],
        &[],
        |config| {
            config.cli("cli");
        },
    );
    let cli = generated.text("cli.rs");
    for command in ["Models", "Models2", "PublisherModels"] {
        let declaration = format!("pub enum {command} {{");
        assert_eq!(cli.matches(&declaration).count(), 1, "{command}: {cli}");
    }
    let client = generated.text("client.rs");
    assert!(client.contains("pub fn model_service("), "{client}");
    assert!(client.contains("pub fn model_garden_service("), "{client}");
}

/// A Get of a resource declared in an imported file (not one of the API's)
/// is a custom method, with a warning: its storage is not generated.
#[test]
fn standard_methods_on_imported_resources_are_custom() {
    let column = r#"syntax = "proto3";
package ads.v1.resources;
import "google/api/resource.proto";
message Column {
  option (google.api.resource) = {
    type: "ads.example/Column"
    pattern: "customers/{customer}/columns/{column}"
  };
  string name = 1;
}
"#;
    let columns = r#"syntax = "proto3";
package ads.v1.services;
import "ads/v1/resources/column.proto";
import "google/api/annotations.proto";
// Reads columns.
service ColumnService {
  // Returns one column.
  rpc GetColumn(GetColumnRequest) returns (ads.v1.resources.Column) {
    option (google.api.http) = {get: "/v1/{name=customers/*/columns/*}"};
  }
}
message GetColumnRequest {
  string name = 1;
}
"#;
    let generated = generate_protos(
        &[("ads/v1/services/columns.proto", columns)],
        &[("ads/v1/resources/column.proto", column)],
        |_| {},
    );
    let warnings = &generated.warnings;
    assert!(
        warnings.contains("`GetColumn` works on `ads.v1.resources.Column`, a resource of a file"),
        "{warnings}"
    );
    let services = generated.text("ads.v1.services.api.rs");
    assert!(
        services.contains("pub trait ColumnServiceHandler"),
        "{services}"
    );
}

/// A display name is what people read: 1 to 64 characters, no surrounding
/// spaces and no control characters, on a collection, a field or a field of
/// every resource; anything else is reported where it is written.
#[test]
fn display_names_are_checked_where_they_are_written() {
    let registry = "platform/registry/v2/annotations.toml";
    assert_reported(
        registry,
        r#"display_name = "Repositories""#,
        r#"display_name = " Repositories""#,
        "platform/registry/v2/annotations.toml:4:16: `display_name` is 1 to 64 characters without surrounding spaces (` Repositories` is 13)",
    );
    assert_reported(
        registry,
        r#"display_name = "Repositories""#,
        r#"display_name = """#,
        "`display_name` is 1 to 64 characters without surrounding spaces (`` is 0)",
    );
    let iam = "platform/iam/v2/annotations.toml";
    assert_reported(
        iam,
        r#"display_name = "Sign-in claim""#,
        r#"display_name = "Sign-in\u0007claim""#,
        "`display_name` `Sign-in\\u{7}claim` holds a control character",
    );
    let every = "platform/annotations.toml";
    assert_reported(
        every,
        r#"display_name = "Created""#,
        &format!(r#"display_name = "{}""#, "x".repeat(65)),
        "is 65)",
    );
}

/// A collection declares the capabilities the application checks itself
/// (the registry's `repos.pull`, `repos.push`): `CAPABILITIES` lists them;
/// a verb that is not one, a standard method's, or one named twice is
/// reported where it is written.
#[test]
fn declared_capabilities_are_listed_and_checked() {
    let services = generated_text(&workspace().join("platform/proto"), "services.rs");
    for capability in ["\"repos.pull\"", "\"repos.push\"", "\"repos.get\""] {
        assert!(services.contains(capability), "{capability}");
    }
    let registry = "platform/registry/v2/annotations.toml";
    let declared = r#"capabilities = ["pull", "push"]"#;
    assert_reported(
        registry,
        declared,
        r#"capabilities = ["pull", "Push!"]"#,
        "`capabilities` names verbs such as `pull` (a lower-case letter, then letters and digits, at most 32): `Push!` is not one",
    );
    assert_reported(
        registry,
        declared,
        r#"capabilities = ["pull", "update"]"#,
        "`repos.update` is the capability of a standard method already",
    );
    assert_reported(
        registry,
        declared,
        r#"capabilities = ["pull", "pull"]"#,
        "`capabilities` names `pull` twice",
    );
    assert_reported(
        "platform/annotations.toml",
        "max_depth = 16",
        "max_depth = 16\ncapabilities = [\"pull\"]",
        "may hold only `fields` rules",
    );
}
