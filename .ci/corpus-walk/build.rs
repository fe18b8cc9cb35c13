//! Generates the API of `WALK_PROTO` (its files) with `WALK_IMPORTS` (the
//! googleapis tree) as the import root of everything it imports.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = std::env::var("WALK_PROTO")?;
    let imports = std::env::var("WALK_IMPORTS")?;
    println!("cargo:rerun-if-env-changed=WALK_PROTO");
    protoapi_codegen::Config::new()
        .include(&proto)
        .include(&imports)
        .files_under(&proto)?
        .build_script()?;
    Ok(())
}
