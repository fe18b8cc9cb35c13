//! Generates the Press API from `proto/`, which has no annotation file: the
//! protos it imports (`google/api`, `google/type`) ship with the generator.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    protoapi_codegen::Config::new()
        .include("proto")
        .files_under("proto")?
        .build_script()?;
    Ok(())
}
