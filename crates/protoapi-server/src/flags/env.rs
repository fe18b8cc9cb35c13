//! Environment variables named after the server, and per-server defaults.

use clap::{Command, Parser};

/// How a server's flags are read: each flag without an environment variable
/// of its own also reads `<PREFIX>_<FLAG_ID>` (`--db-acquire-timeout` reads
/// `SHELVES_DB_ACQUIRE_TIMEOUT`), and flags may take the server's own
/// defaults (its port).
#[derive(Clone, Debug)]
pub struct Env {
    prefix: &'static str,
    defaults: Vec<(&'static str, &'static str)>,
}

impl Env {
    /// Variables named `<prefix>_<FLAG_ID>`.
    pub fn prefix(prefix: &'static str) -> Self {
        Env {
            prefix,
            defaults: Vec::new(),
        }
    }

    /// The flag whose id is `id` (its field name) defaults to `value`.
    pub fn default(mut self, id: &'static str, value: &'static str) -> Self {
        self.defaults.push((id, value));
        self
    }

    /// The command of `A`, its flags reading the environment.
    pub fn command<A: Parser>(&self) -> Command {
        let prefix = self.prefix;
        let mut command = A::command().mut_args(|arg| {
            if arg.get_env().is_some() || arg.is_positional() {
                return arg;
            }
            let name = format!("{prefix}_{}", arg.get_id().as_str().to_ascii_uppercase());
            arg.env(name)
        });
        for &(id, value) in &self.defaults {
            command = command.mut_arg(id, |arg| arg.default_value(value));
        }
        command
    }

    /// Parses the process's arguments and environment; prints the error or
    /// the help and exits when they ask for it.
    pub fn parse<A: Parser>(&self) -> A {
        let mut command = self.command::<A>();
        let mut matches = command.clone().get_matches();
        A::from_arg_matches_mut(&mut matches)
            .unwrap_or_else(|error| error.format(&mut command).exit())
    }

    /// Parses `args` (the first being the program's name) and the
    /// process's environment.
    pub fn try_parse_from<A: Parser>(
        &self,
        args: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
    ) -> Result<A, clap::Error> {
        let mut matches = self.command::<A>().try_get_matches_from(args)?;
        A::from_arg_matches_mut(&mut matches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Parser)]
    struct Args {
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: String,
        #[arg(long)]
        db_acquire_timeout: Option<String>,
        #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
        otlp_endpoint: Option<String>,
    }

    #[test]
    fn flags_read_variables_named_after_the_server_unless_they_name_their_own() {
        let command = Env::prefix("SHELVES").command::<Args>();
        let env = |id: &str| {
            let arg = command.get_arguments().find(|a| a.get_id() == id).unwrap();
            arg.get_env().unwrap().to_str().unwrap().to_owned()
        };
        assert_eq!(env("listen"), "SHELVES_LISTEN");
        assert_eq!(env("db_acquire_timeout"), "SHELVES_DB_ACQUIRE_TIMEOUT");
        assert_eq!(env("otlp_endpoint"), "OTEL_EXPORTER_OTLP_ENDPOINT");
    }

    #[test]
    fn a_server_sets_its_own_defaults() {
        let env = Env::prefix("UNSET_IN_ANY_ENVIRONMENT").default("listen", "127.0.0.1:8090");
        let args: Args = env.try_parse_from(["shelves"]).unwrap();
        assert_eq!(args.listen, "127.0.0.1:8090");
        let args: Args = env
            .try_parse_from(["shelves", "--listen", "0.0.0.0:1"])
            .unwrap();
        assert_eq!(args.listen, "0.0.0.0:1");
    }
}
