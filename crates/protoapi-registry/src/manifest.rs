//! Manifests as the registry checks and indexes them: OCI image manifests
//! and indexes, Docker schema 2 manifests and manifest lists.

use serde_json::Value;

use crate::digest::Digest;
use crate::error::{Code, RegistryError};

pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";

/// The largest manifest accepted (the spec asks registries to take at least 4 MiB).
pub const MAX_MANIFEST_BYTES: usize = 4 << 20;

/// The most blobs and manifests one manifest may refer to: each is looked
/// up before the manifest is stored.
pub const MAX_REFERENCES: usize = 1000;

/// What a manifest says that the registry keeps or checks.
#[derive(Debug)]
pub struct Manifest {
    pub media_type: &'static str,
    /// Blobs it needs in the repository (config and layers).
    pub blobs: Vec<Digest>,
    /// Manifests it needs in the repository (an index's).
    pub manifests: Vec<Digest>,
    /// The manifest it refers to (the referrers API).
    pub subject: Option<Digest>,
    /// `artifactType`, else the config's media type (what referrers list).
    pub artifact_type: Option<String>,
    pub annotations: Option<Value>,
}

fn invalid(message: impl Into<String>) -> RegistryError {
    RegistryError::new(Code::ManifestInvalid, message)
}

/// Checks `bytes` as a manifest of `content_type` (the request's), which
/// must agree with its own `mediaType` when both are given.
pub fn parse(content_type: Option<&str>, bytes: &[u8]) -> Result<Manifest, RegistryError> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|error| invalid(format!("not JSON: {error}")))?;
    let Value::Object(fields) = &value else {
        return Err(invalid("a manifest is a JSON object"));
    };
    if fields.get("schemaVersion").and_then(Value::as_u64) != Some(2) {
        return Err(invalid("only schemaVersion 2 manifests are accepted"));
    }
    let declared = fields.get("mediaType").and_then(Value::as_str);
    let content_type = content_type
        .map(|value| value.split(';').next().unwrap_or_default().trim())
        .filter(|value| !value.is_empty());
    let media_type = match (declared, content_type) {
        (Some(declared), Some(header)) if declared != header => {
            return Err(invalid(format!(
                "the manifest's mediaType `{declared}` differs from its Content-Type `{header}`"
            )));
        }
        (Some(media_type), _) | (None, Some(media_type)) => media_type,
        (None, None) if fields.contains_key("manifests") => OCI_INDEX,
        (None, None) => OCI_MANIFEST,
    };
    let media_type = [OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_LIST]
        .into_iter()
        .find(|known| *known == media_type)
        .ok_or_else(|| invalid(format!("manifests of type `{media_type}` are not accepted")))?;
    let index = matches!(media_type, OCI_INDEX | DOCKER_LIST);
    let mut manifest = Manifest {
        media_type,
        blobs: Vec::new(),
        manifests: Vec::new(),
        subject: fields
            .get("subject")
            .map(|d| descriptor(d, "subject"))
            .transpose()?,
        artifact_type: fields
            .get("artifactType")
            .and_then(Value::as_str)
            .map(str::to_owned),
        annotations: fields.get("annotations").cloned(),
    };
    if index {
        for entry in bounded(array(fields.get("manifests"), "manifests")?)? {
            manifest.manifests.push(descriptor(entry, "manifests")?);
        }
        return Ok(manifest);
    }
    let config = fields
        .get("config")
        .ok_or_else(|| invalid("an image manifest has a config"))?;
    manifest.blobs.push(descriptor(config, "config")?);
    if manifest.artifact_type.is_none() {
        manifest.artifact_type = config
            .get("mediaType")
            .and_then(Value::as_str)
            .map(str::to_owned);
    }
    for layer in bounded(array(fields.get("layers"), "layers")?)? {
        // Layers kept elsewhere (`urls`, non-distributable) need not be here.
        if layer.get("urls").is_none() {
            manifest.blobs.push(descriptor(layer, "layers")?);
        }
    }
    Ok(manifest)
}

fn array<'a>(value: Option<&'a Value>, field: &str) -> Result<&'a [Value], RegistryError> {
    match value {
        None => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(invalid(format!("`{field}` is a list of descriptors"))),
    }
}

fn bounded(items: &[Value]) -> Result<&[Value], RegistryError> {
    if items.len() > MAX_REFERENCES {
        return Err(invalid(format!(
            "a manifest refers to at most {MAX_REFERENCES} blobs or manifests"
        )));
    }
    Ok(items)
}

fn descriptor(value: &Value, field: &str) -> Result<Digest, RegistryError> {
    let digest = value
        .get("digest")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(format!("a descriptor in `{field}` has no digest")))?;
    if value.get("size").and_then(Value::as_u64).is_none() {
        return Err(invalid(format!("a descriptor in `{field}` has no size")));
    }
    Digest::parse(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    #[test]
    fn image_manifests_name_their_blobs_and_subject() {
        let body = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": "application/vnd.example+json", "digest": A, "size": 2},
            "layers": [{"mediaType": "x", "digest": B, "size": 3}],
            "subject": {"mediaType": OCI_MANIFEST, "digest": B, "size": 9},
        });
        let manifest = parse(Some(OCI_MANIFEST), body.to_string().as_bytes()).unwrap();
        assert_eq!(manifest.blobs.len(), 2);
        assert_eq!(manifest.subject.unwrap().as_str(), B);
        assert_eq!(
            manifest.artifact_type.as_deref(),
            Some("application/vnd.example+json")
        );
    }

    #[test]
    fn a_manifest_refers_to_a_bounded_number_of_blobs() {
        let layer = serde_json::json!({"mediaType": "x", "digest": A, "size": 1});
        let manifest = |layers: usize| {
            serde_json::json!({
                "schemaVersion": 2,
                "config": {"mediaType": "x", "digest": A, "size": 1},
                "layers": vec![layer.clone(); layers],
            })
            .to_string()
        };
        assert!(parse(None, manifest(MAX_REFERENCES).as_bytes()).is_ok());
        let refused = parse(None, manifest(MAX_REFERENCES + 1).as_bytes()).unwrap_err();
        assert_eq!(refused.code(), Code::ManifestInvalid);
    }

    #[test]
    fn bad_manifests_are_refused() {
        let index =
            serde_json::json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": []});
        assert_eq!(
            parse(Some(OCI_MANIFEST), index.to_string().as_bytes())
                .unwrap_err()
                .code(),
            Code::ManifestInvalid,
            "Content-Type and mediaType differ"
        );
        assert_eq!(
            parse(None, index.to_string().as_bytes())
                .unwrap()
                .media_type,
            OCI_INDEX
        );
        for bad in [
            &b"{"[..],
            b"[]",
            br#"{"schemaVersion": 1}"#,
            br#"{"schemaVersion": 2, "mediaType": "text/plain"}"#,
        ] {
            assert_eq!(parse(None, bad).unwrap_err().code(), Code::ManifestInvalid);
        }
    }
}
