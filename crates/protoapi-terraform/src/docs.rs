//! The provider's documentation in the Terraform Registry's layout
//! (`index.md`, `resources/<name>.md`, `data-sources/<name>.md`), written
//! from the same resource types the provider serves: descriptions from the
//! proto comments, an example each, and every attribute under Required,
//! Optional or Read-Only.

use std::fmt::Write;
use std::path::Path;

use crate::config;
use crate::provider::Provider;
use crate::schema::{Attr, ID, Kind, Mode, PARENT, ResourceType};

/// Every page, by its path under the documentation's directory.
pub fn pages(provider: &Provider) -> Vec<(String, String)> {
    let prefix = provider.prefix();
    let mut pages = vec![("index.md".to_owned(), index(provider))];
    for resource in provider.types() {
        let short = resource
            .name
            .trim_start_matches(&format!("{prefix}_"))
            .to_owned();
        if resource.managed {
            pages.push((format!("resources/{short}.md"), resource_page(resource)));
        }
        pages.push((
            format!("data-sources/{short}.md"),
            data_source_page(resource),
        ));
        if let Some(name) = crate::list::name(resource, prefix) {
            let short = name.trim_start_matches(&format!("{prefix}_")).to_owned();
            pages.push((
                format!("data-sources/{short}.md"),
                list_page(resource, &name),
            ));
        }
    }
    pages
}

fn list_page(resource: &ResourceType, name: &str) -> String {
    let attrs = crate::list::attrs(resource);
    let mut page = format!(
        "# {name} (data source)\n\nEvery {} the filters select (without any, every one the \
         provider's credentials can see).\n\n## Example\n\n```hcl\ndata \"{name}\" \"example\" \
         {{\n  parent_id = \"<parent uid>\"\n}}\n```\n\n## Schema\n\n",
        crate::schema::words(resource.collection.singular),
    );
    attributes(&mut page, &attrs);
    page
}

/// Writes [`pages`] under `dir`.
pub fn write(provider: &Provider, dir: &Path) -> std::io::Result<()> {
    for (path, text) in pages(provider) {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    Ok(())
}

fn index(provider: &Provider) -> String {
    let prefix = provider.prefix();
    let mut page = format!(
        "# The `{prefix}` provider\n\nManages the API's items as Terraform resources: one \
         resource type and one data source per collection.\n\n## Example\n\n```hcl\n\
         provider \"{prefix}\" {{\n  endpoint = \"https://api.example:8443\"\n}}\n```\n\n\
         Credentials, the first one found: `token`, `{upper}_TOKEN`, an identity token \
         exchanged for `identity` (`identity_token` or `identity_token_file`), the command-line client's login.\n\n\
         ## Schema\n\n",
        upper = prefix.to_uppercase()
    );
    attributes(&mut page, &config::attrs(prefix));
    page.push_str("## Resources\n\n");
    for resource in provider.types().iter().filter(|t| t.managed) {
        let _ = writeln!(page, "- `{}`", resource.name);
    }
    page.push_str("\n## Data sources\n\n");
    for resource in provider.types() {
        let _ = writeln!(page, "- `{}`", resource.name);
        if let Some(name) = crate::list::name(resource, prefix) {
            let _ = writeln!(page, "- `{name}`");
        }
    }
    page
}

fn resource_page(resource: &ResourceType) -> String {
    let mut page = format!(
        "# {} (resource)\n\n{}\n\n",
        resource.name, resource.description
    );
    let _ = write!(
        page,
        "## Example\n\n```hcl\nresource \"{}\" \"example\" {{\n{}}}\n```\n\n## Schema\n\n",
        resource.name,
        example(&resource.attrs)
    );
    attributes(&mut page, &resource.attrs);
    let _ = write!(
        page,
        "## Import\n\n```sh\nterraform import {}.example <{}>\n```\n",
        resource.name,
        resource.collection.key_field()
    );
    page
}

fn data_source_page(resource: &ResourceType) -> String {
    let mut page = format!(
        "# {name} (data source)\n\n{description}\n\n## Example\n\n```hcl\n\
         data \"{name}\" \"example\" {{\n  id = \"<{key} or name>\"\n}}\n```\n\n## Schema\n\n",
        name = resource.name,
        description = resource.description,
        key = resource.collection.key_field(),
    );
    attributes(&mut page, &resource.data_source_attrs());
    page
}

/// The example's attributes: the parent, every required one and every
/// one set only on create.
fn example(attrs: &[Attr]) -> String {
    let mut body = String::new();
    for attr in attrs {
        let value = match (attr.name.as_str(), attr.mode) {
            (PARENT, _) => "\"<parent uid>\"".to_owned(),
            (_, Mode::Required) => sample(&attr.kind, &attr.name),
            (_, Mode::Optional) if attr.replace => sample(&attr.kind, &attr.name),
            _ => continue,
        };
        let _ = writeln!(body, "  {} = {value}", attr.name);
    }
    body
}

fn sample(kind: &Kind, name: &str) -> String {
    match kind {
        Kind::String => format!("\"example-{}\"", name.replace('_', "-")),
        Kind::Enum(names) => format!("\"{}\"", names.last().map_or("", String::as_str)),
        Kind::Number => "1".to_owned(),
        Kind::Bool => "true".to_owned(),
        Kind::List(item) => format!("[{}]", sample(item, name)),
        Kind::Map(value) => format!("{{ key = {} }}", sample(value, name)),
        Kind::Object(_) => "{}".to_owned(),
    }
}

/// The attributes under Required, Optional and Read-Only.
fn attributes(page: &mut String, attrs: &[Attr]) {
    for (heading, mode) in [
        ("Required", Mode::Required),
        ("Optional", Mode::Optional),
        ("Read-Only", Mode::Computed),
    ] {
        let listed: Vec<&Attr> = attrs.iter().filter(|a| a.mode == mode).collect();
        if listed.is_empty() {
            continue;
        }
        let _ = writeln!(page, "### {heading}\n");
        for attr in listed {
            line(page, attr, "");
        }
        page.push('\n');
    }
}

fn line(page: &mut String, attr: &Attr, indent: &str) {
    let replaces = match attr.replace && attr.name != ID {
        true => " A change replaces the item.",
        false => "",
    };
    let _ = writeln!(
        page,
        "{indent}- `{}` ({}) {}{replaces}",
        attr.name,
        type_name(&attr.kind),
        attr.description
    );
    let nested = match &attr.kind {
        Kind::Object(inner) => Some(inner),
        Kind::List(item) | Kind::Map(item) => match &**item {
            Kind::Object(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    };
    for inner in nested.into_iter().flatten() {
        line(page, inner, &format!("{indent}  "));
    }
}

fn type_name(kind: &Kind) -> String {
    match kind {
        Kind::String => "String".to_owned(),
        Kind::Enum(names) => format!("String, one of {}", names.join(", ")),
        Kind::Number => "Number".to_owned(),
        Kind::Bool => "Boolean".to_owned(),
        Kind::List(item) => format!("List of {}", type_name(item)),
        Kind::Map(value) => format!("Map of {}", type_name(value)),
        Kind::Object(_) => "Object".to_owned(),
    }
}
