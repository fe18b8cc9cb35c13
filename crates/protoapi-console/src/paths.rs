//! The console's place in the API's URL space.

use protoapi_client::schema::Schema;

/// Where the console is served.
pub const PREFIX: &str = "/console/";

/// Whether `rest` (a path after [`PREFIX`]) is one of the console's pages.
pub(crate) fn is_page(schema: &Schema, rest: &str) -> bool {
    let mut segments = rest.split('/');
    let first = segments.next().unwrap_or_default();
    let second = segments.next();
    match first {
        "" | "signin" | "signout" => second.is_none(),
        "oidc" | "assets" => true,
        collection if schema.collection(collection).is_some() => {
            matches!(second, None | Some("new" | "item" | "edit" | "delete"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::DescriptorPool;

    static SCHEMA: Schema = Schema {
        title: "t",
        descriptors: || {
            static NONE: std::sync::LazyLock<DescriptorPool> =
                std::sync::LazyLock::new(DescriptorPool::new);
            &NONE
        },
        collections: &[],
        operations: None,
        access: None,
    };

    #[test]
    fn the_session_goes_to_the_consoles_pages_only() {
        for page in [
            "",
            "signin",
            "signout",
            "oidc/callback",
            "assets/console.css",
        ] {
            assert!(is_page(&SCHEMA, page), "{page}");
        }
        for other in ["signin/x", "v1/things", "things/item/a", "../v1/x"] {
            assert!(!is_page(&SCHEMA, other), "{other}");
        }
    }
}
