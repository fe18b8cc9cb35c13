//! Generates the hostile-names API from `proto/` at build time.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    protoapi_codegen::Config::new()
        .include("proto")
        .files_under("proto")?
        .build_script()?;
    Ok(())
}
