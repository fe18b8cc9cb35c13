//! The flags every server built with the generator takes (feature `flags`):
//! clap `Args` structs a server's own `Parser` flattens beside its own
//! flags, and [`Env`], which names their environment variables after the
//! server (`SHELVES_LISTEN`, `WIDGETS_LISTEN`).
//!
//! ```no_run
//! use clap::Parser;
//! use protoapi_server::flags::{Env, ServeFlags};
//!
//! #[derive(Parser)]
//! struct Args {
//!     #[command(flatten)]
//!     serve: ServeFlags,
//! }
//!
//! let args: Args = Env::prefix("SHELVES").default("listen", "127.0.0.1:8070").parse();
//! ```

mod console;
mod cors;
mod env;
#[cfg(feature = "ratelimit")]
mod ratelimit;
mod serve;
#[cfg(feature = "observe")]
mod telemetry;
mod tls;

pub use console::ConsoleFlags;
pub use cors::CorsFlags;
pub use env::Env;
#[cfg(feature = "ratelimit")]
pub use ratelimit::RateLimitFlags;
pub use serve::ServeFlags;
#[cfg(feature = "observe")]
pub use telemetry::{LOG_BUFFER_BYTES, Logs, METRICS_CONNECTIONS, Telemetry, serve_metrics};
pub use tls::TlsFlags;
