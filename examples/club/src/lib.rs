//! A club whose members sign in with their identity provider's tokens: the
//! annotations declare `SignIn.ExchangeToken` the API's token exchange, and
//! the generated `Services::token_exchange` serves it from the members'
//! store. Declared in `proto/`, generated in `build.rs`.

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

/// Members in memory.
pub use protoapi_runtime::memory::MemoryStore;
/// Members in SQLite or PostgreSQL.
pub use protoapi_runtime::sql::SqlStore;
