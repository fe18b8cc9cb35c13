//! Stage 1: parse `.proto` files with protox (no `protoc` needed).

use std::path::{Path, PathBuf};

use prost::Message;
use prost_reflect::DescriptorPool;
use prost_types::FileDescriptorSet;

use crate::Error;

/// The parsed contract: the same descriptors in the three forms later stages need.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// For prost-build and tonic code generation.
    pub file_descriptor_set: FileDescriptorSet,
    /// For reading options (`google.api.http`, field behaviours, resources).
    pub pool: DescriptorPool,
    /// Encoded descriptor set (with source info), embedded for reflection and JSON.
    pub encoded: Vec<u8>,
}

/// Parses `files` (paths relative to one of `includes`) and their imports.
pub fn load(includes: &[PathBuf], files: &[PathBuf]) -> Result<Loaded, Error> {
    let mut compiler = protox::Compiler::new(includes).map_err(Error::Parse)?;
    compiler.include_imports(true).include_source_info(true);
    for file in files {
        compiler.open_file(file).map_err(Error::Parse)?;
    }
    let mut file_descriptor_set = compiler.file_descriptor_set();
    // Absolute include paths must not leak into the checked-in output.
    for file in &mut file_descriptor_set.file {
        if let Some(name) = &file.name {
            file.name = Some(relative(includes, Path::new(name)));
        }
    }
    let encoded = file_descriptor_set.encode_to_vec();
    let pool = compiler.descriptor_pool();
    Ok(Loaded {
        file_descriptor_set,
        pool,
        encoded,
    })
}

fn relative(includes: &[PathBuf], path: &Path) -> String {
    includes
        .iter()
        .find_map(|include| path.strip_prefix(include).ok())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}
