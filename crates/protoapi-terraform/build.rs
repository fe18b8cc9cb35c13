//! Compiles the plugin protocol's proto (server side only) with protox: no
//! `protoc` is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = ["proto/tfplugin6.proto", "proto/plugin.proto"];
    for proto in protos {
        println!("cargo:rerun-if-changed={proto}");
    }
    let descriptors = protox::compile(protos, ["proto"])?;
    tonic_prost_build::configure()
        .build_client(false)
        .compile_fds(descriptors)?;
    Ok(())
}
