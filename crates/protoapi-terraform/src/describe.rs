//! Attributes as the plugin protocol describes them: cty types in their
//! JSON notation, nested messages as nested attributes.

use serde_json::{Value as Json, json};

use crate::proto::{StringKind, schema};
use crate::schema::{Attr, Kind, Mode};

/// The schema of a block of `attrs`.
pub fn schema(attrs: &[Attr], description: &str) -> crate::proto::Schema {
    crate::proto::Schema {
        version: 0,
        block: Some(schema::Block {
            version: 0,
            attributes: attrs.iter().map(attribute).collect(),
            block_types: Vec::new(),
            description: description.to_owned(),
            description_kind: StringKind::Markdown as i32,
            deprecated: false,
        }),
    }
}

fn attribute(attr: &Attr) -> schema::Attribute {
    let (r#type, nested_type) = match &attr.kind {
        Kind::Object(inner) => (Vec::new(), Some(nested(inner, Nesting::Single))),
        Kind::List(item) if matches!(**item, Kind::Object(_)) => {
            let Kind::Object(inner) = &**item else {
                unreachable!()
            };
            (Vec::new(), Some(nested(inner, Nesting::List)))
        }
        Kind::Map(value) if matches!(**value, Kind::Object(_)) => {
            let Kind::Object(inner) = &**value else {
                unreachable!()
            };
            (Vec::new(), Some(nested(inner, Nesting::Map)))
        }
        kind => (cty(kind).to_string().into_bytes(), None),
    };
    schema::Attribute {
        name: attr.name.clone(),
        r#type,
        nested_type,
        description: attr.description.clone(),
        required: attr.mode == Mode::Required,
        optional: attr.mode == Mode::Optional,
        computed: attr.mode != Mode::Required,
        sensitive: attr.sensitive,
        description_kind: StringKind::Markdown as i32,
        deprecated: false,
    }
}

enum Nesting {
    Single,
    List,
    Map,
}

fn nested(attrs: &[Attr], nesting: Nesting) -> schema::Object {
    use schema::object::NestingMode;
    schema::Object {
        attributes: attrs.iter().map(attribute).collect(),
        nesting: match nesting {
            Nesting::Single => NestingMode::Single,
            Nesting::List => NestingMode::List,
            Nesting::Map => NestingMode::Map,
        } as i32,
    }
}

/// The cty type of values of `kind`, in cty's JSON notation.
pub fn cty(kind: &Kind) -> Json {
    match kind {
        Kind::String | Kind::Enum(_) => json!("string"),
        Kind::Number => json!("number"),
        Kind::Bool => json!("bool"),
        Kind::List(item) => json!(["list", cty(item)]),
        Kind::Map(value) => json!(["map", cty(value)]),
        Kind::Object(attrs) => json!([
            "object",
            attrs
                .iter()
                .map(|a| (a.name.clone(), cty(&a.kind)))
                .collect::<serde_json::Map<_, _>>()
        ]),
    }
}
