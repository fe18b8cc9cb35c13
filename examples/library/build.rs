//! Generates the library API from `proto/` (no annotation file: the
//! parents come from the resource patterns).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    protoapi_codegen::Config::new()
        .include("proto")
        .files_under("proto")?
        .cli("cli")
        .build_script()?;
    Ok(())
}
