//! Generates the widgets API from `proto/` at build time, with its
//! command-line module (`widgets::cli`, feature `cli`).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    protoapi_codegen::Config::new()
        .include("proto")
        .files_under("proto")?
        .cli("cli")
        .build_script()?;
    Ok(())
}
