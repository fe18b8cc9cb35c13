//! The library API's Terraform provider (`library_shelf`, `library_book`,
//! ...): resources keyed by AIP-122 names, from the generated `SCHEMA`
//! alone. The library's tests serve it without tokens.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match protoapi_runtime::terraform::serve(&library::SCHEMA, "library", |c, _| c).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("terraform-provider-library: {error}");
            ExitCode::FAILURE
        }
    }
}
