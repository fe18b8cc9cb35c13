//! AIP-163 `validate_only` carried to storage: a write running under
//! [`DryRun::scope`] with `true` runs every check storage runs (a missing
//! parent, a taken key, references, an etag, dependents refusing a delete)
//! and changes nothing: the library's stores roll the write back
//! (`Backend::dry_runs`). The generated method enters the scope when its
//! request asks `validate_only` and its store can dry-run; a store that
//! cannot is never handed a write to validate.

tokio::task_local! {
    static DRY_RUN: ();
}

/// Marks the writes of a flow as dry runs.
#[derive(Clone, Copy, Debug)]
pub struct DryRun;

impl DryRun {
    /// Runs `flow`, its writes dry runs when `dry`.
    pub async fn scope<F: Future>(dry: bool, flow: F) -> F::Output {
        match dry {
            true => DRY_RUN.scope((), flow).await,
            false => flow.await,
        }
    }

    /// Whether the write running on this task is a dry run, which storage
    /// checks fully and then rolls back.
    pub fn current() -> bool {
        DRY_RUN.try_with(|()| ()).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::DryRun;

    #[tokio::test]
    async fn only_the_scoped_flow_is_dry() {
        assert!(!DryRun::current());
        assert!(DryRun::scope(true, async { DryRun::current() }).await);
        assert!(!DryRun::scope(false, async { DryRun::current() }).await);
        assert!(!DryRun::current());
    }
}
