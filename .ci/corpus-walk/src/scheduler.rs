//! The custom methods of `google.cloud.scheduler.v1.CloudScheduler` (pause,
//! resume, run), over the generated storage of jobs.

use std::sync::Arc;

use protoapi_runtime::sql::SqlStore;
use protoapi_runtime::{Caller, Error};

use crate::google::cloud::scheduler::v1::job::State;
use crate::google::cloud::scheduler::v1::{
    CloudSchedulerHandler, Job, JobStore, PauseJobRequest, ResumeJobRequest, RunJobRequest,
};

/// Every service on `store`: `CloudScheduler` has custom methods.
pub async fn serve(services: crate::Services, store: Arc<SqlStore>) -> crate::Services {
    services.cloud_scheduler(store)
}

impl CloudSchedulerHandler for SqlStore {
    async fn pause_job(&self, _: &Caller, request: PauseJobRequest) -> Result<Job, Error> {
        set_state(self, &request.name, State::Paused).await
    }

    async fn resume_job(&self, _: &Caller, request: ResumeJobRequest) -> Result<Job, Error> {
        set_state(self, &request.name, State::Enabled).await
    }

    /// Runs the job now: nothing runs here; the job is answered as it is,
    /// refused if it is paused.
    async fn run_job(&self, _: &Caller, request: RunJobRequest) -> Result<Job, Error> {
        let job = job(self, &request.name).await?;
        if job.state() == State::Paused {
            return Err(Error::failed_precondition(
                "JOB_PAUSED",
                format!("job `{}` is paused", request.name),
                Vec::new(),
            ));
        }
        Ok(job)
    }
}

async fn job(store: &SqlStore, name: &str) -> Result<Job, Error> {
    (store.get_job(name).await?)
        .ok_or_else(|| Error::not_found("cloudscheduler.googleapis.com/Job", name))
}

/// The job `name` with `state` (an output-only field, which no update
/// writes): stored again in its place.
async fn set_state(store: &SqlStore, name: &str, state: State) -> Result<Job, Error> {
    let mut job = job(store, name).await?;
    job.set_state(state);
    store.delete_job(name, None).await?;
    store.insert_job(&job).await?;
    Ok(job)
}
