//! The widgets API's Terraform provider: `widgets_widget`, `widgets_part`,
//! ... built from the generated `SCHEMA` alone, as any API's can be
//! (`protoapi_runtime::terraform`). The widgets server takes no token, so
//! the connection gets none.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match protoapi_runtime::terraform::serve(&widgets::SCHEMA, "widgets", |c, _| c).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("terraform-provider-widgets: {error}");
            ExitCode::FAILURE
        }
    }
}
