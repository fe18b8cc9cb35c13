//! Generates the bookshelf API from `proto/`: nothing else to include, the
//! protos it imports (`google/api`, `protoapi/v1`) ship with the generator.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    protoapi_codegen::Config::new()
        .include("proto")
        .files_under("proto")?
        .build_script()?;
    Ok(())
}
