//! Prost messages and tonic service code, via prost-build fed by protox.

use std::collections::BTreeMap;

use prost_build::Module;
use prost_types::FileDescriptorSet;

use crate::Error;

/// Generated code per proto package (`library.v2` → source).
pub fn emit(file_descriptor_set: &FileDescriptorSet) -> Result<BTreeMap<String, String>, Error> {
    // Every file goes to prost-build (its type graph needs them all); the
    // well-known types come from prost-types, so their modules are dropped.
    let files = file_descriptor_set.file.iter();
    let packages: BTreeMap<Module, String> = files
        .clone()
        .map(|file| {
            (
                Module::from_protobuf_package_name(file.package()),
                file.package().to_owned(),
            )
        })
        .collect();
    let requests = files
        .map(|file| {
            (
                Module::from_protobuf_package_name(file.package()),
                file.clone(),
            )
        })
        .collect();
    let mut config = prost_build::Config::new();
    config
        .service_generator(
            tonic_prost_build::configure()
                .build_client(true)
                .build_server(true)
                .build_transport(true)
                .service_generator(),
        )
        .format(false);
    let modules = config.generate(requests).map_err(Error::Prost)?;
    Ok(modules
        .into_iter()
        .map(|(module, code)| (packages[&module].clone(), code))
        .filter(|(package, _)| package != "google.protobuf")
        .collect())
}
