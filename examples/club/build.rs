//! Generates the club API from `proto/` (with its annotation file, which
//! declares the token exchange).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    protoapi_codegen::Config::new()
        .include("proto")
        .files_under("proto")?
        .build_script()?;
    Ok(())
}
