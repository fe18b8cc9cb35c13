//! Generates the hostile-names API from `proto/` at build time.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    codegen::Config::new()
        .include("proto")
        .files_under("proto")?
        .build_script()?;
    Ok(())
}
