//! Standard methods answering AIP-151 operations ([`start_operation`]), and
//! the methods of `google.longrunning.Operations` over an
//! [`OperationStore`] (see [`crate::operation`] for how an operation ends).

use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prost::Message;
use prost_types::Timestamp;
use rand::RngCore;
use tokio::sync::oneshot;
use tracing::Instrument;

use super::ApiContext;
use crate::auth::Need;
use crate::context::Caller;
use crate::error::{Code, Error, FieldViolation};
use crate::operation::{
    Admission, MAX_WAIT, Operation, OperationStore, Outcome, Running, StoredOperation, abandoned,
    cancelled,
};
use crate::request_id::RequestId;
use crate::resource::{Resource, SortValue};

/// Operations a page of `ListOperations` holds unless asked for fewer.
pub const OPERATIONS_PAGE: usize = 50;

/// How many operations a page reads, at most, per operation it may hold,
/// and in all (unless the page asked for more).
const SCAN_FACTOR: usize = 10;
const MAX_SCAN: usize = 2000;

/// What an operation's metadata can tell, for the API's metadata message
/// (AIP-151's `OperationMetadata`: `create_time`, `end_time`, `target`,
/// `verb`).
#[derive(Debug)]
pub struct Progress<'a> {
    /// The key its method was authorized on.
    pub target: &'a str,
    /// `create`, `update` or `delete`.
    pub verb: &'static str,
    create_time: i64,
    end_time: Option<i64>,
}

impl Progress<'_> {
    pub fn create_time(&self) -> Option<Timestamp> {
        Some(crate::time::from_micros(self.create_time))
    }

    /// When it ended; `None` while it runs.
    pub fn end_time(&self) -> Option<Timestamp> {
        self.end_time.map(crate::time::from_micros)
    }
}

type Metadata = (
    &'static str,
    Box<dyn Fn(&Progress) -> Vec<u8> + Send + Sync>,
);

/// What a method answering an operation starts: what it acts on and the
/// types its `metadata` and `response` hold. Its name and target are known
/// once its flow authorizes the caller.
pub struct Launch {
    resource_type: &'static str,
    verb: &'static str,
    /// The full proto name of the response (`google.protobuf.Empty` too).
    response_type: &'static str,
    metadata: Option<Metadata>,
    create_time: i64,
    /// Its name and target, once admitted.
    named: OnceLock<(String, String)>,
}

impl Launch {
    /// An operation `verb` (`create`, `update`, `delete`) of an `R`,
    /// answering `response_type`.
    pub fn new<R: Resource>(verb: &'static str, response_type: &'static str) -> Self {
        Launch {
            resource_type: R::TYPE,
            verb,
            response_type,
            metadata: None,
            create_time: crate::time::now_micros(),
            named: OnceLock::new(),
        }
    }

    /// Fills `metadata` with a `type_name` (full proto name) message
    /// `encode` writes from the operation's progress.
    pub fn metadata(
        mut self,
        type_name: &'static str,
        encode: impl Fn(&Progress) -> Vec<u8> + Send + Sync + 'static,
    ) -> Self {
        self.metadata = Some((type_name, Box::new(encode)));
        self
    }

    fn name(&self) -> &str {
        self.named.get().map_or("", |(name, _)| name)
    }

    /// The encoded operation, running (`end: None`) or ended with an
    /// outcome (the response encoded, or the error).
    fn body(&self, end: Option<Result<&[u8], &Error>>) -> Vec<u8> {
        let (name, target) = self.named.get().map_or(("", ""), |(n, t)| (n, t));
        let progress = Progress {
            target,
            verb: self.verb,
            create_time: self.create_time,
            end_time: end.as_ref().map(|_| crate::time::now_micros()),
        };
        let metadata = self
            .metadata
            .as_ref()
            .map(|(type_name, encode)| any(type_name, encode(&progress)));
        let outcome = end.map(|end| match end {
            Ok(response) => Outcome::Response(any(self.response_type, response.to_vec())),
            Err(error) => Outcome::Error(crate::operation::status(error)),
        });
        Operation {
            name: name.to_owned(),
            metadata,
            done: outcome.is_some(),
            outcome,
        }
        .encode_to_vec()
    }
}

fn any(type_name: &str, value: Vec<u8>) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("type.googleapis.com/{type_name}"),
        value,
    }
}

/// `{location}operations/operation-{micros}-{random}`: names sort by when
/// they were started.
fn operation_name(target: &str) -> String {
    let location = target
        .match_indices("locations/")
        .filter(|(at, _)| *at == 0 || target.as_bytes()[at - 1] == b'/')
        .last()
        .and_then(|(at, _)| {
            let end = at + "locations/".len();
            let id = target[end..]
                .split('/')
                .next()
                .filter(|id| !id.is_empty())?;
            Some(&target[..end + id.len()])
        });
    let mut random = [0u8; 8];
    rand::rng().fill_bytes(&mut random);
    let random: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let id = format!("operation-{}-{random}", crate::time::now_micros());
    match location {
        Some(location) => format!("{location}/operations/{id}"),
        None => format!("operations/{id}"),
    }
}

/// Runs a standard method's `flow` (answering the item written or deleted,
/// encoded) as the operation `launch` describes, in the background. Errors
/// the flow meets before it authorizes its caller are answered here, and
/// nothing is stored; once it has, the operation is stored running, named
/// after the authorized target's location, and answered (encoded); it ends
/// with the flow's write or error.
///
/// Under an AIP-155 `request_id` (the caller's, for this method and
/// request), the operation's name is recorded with it, and a retry is
/// answered with the first operation as it stands, running or ended,
/// without a second flow; the caller has passed the method's checks again
/// (its dry run) before.
pub async fn start_operation<S, F>(
    store: Arc<S>,
    context: &ApiContext,
    request_id: Option<RequestId>,
    launch: Launch,
    flow: F,
) -> Result<Vec<u8>, Error>
where
    S: OperationStore,
    F: Future<Output = Result<Vec<u8>, Error>> + Send + 'static,
{
    if let Some(id) = &request_id
        && let Some(first) = started_under(&*store, id).await?
    {
        return Ok(first.body);
    }
    let launch = Arc::new(launch);
    let lease = context.operation_lease;
    let name = Arc::new(OnceLock::new());
    let running = {
        let launch = launch.clone();
        Running::new(
            name.clone(),
            Arc::new(move |outcome| launch.body(Some(Ok(outcome)))),
        )
    };
    let stored = Arc::new(AtomicBool::new(false));
    let (admit, admitted) = oneshot::channel();
    let (answer, answered) = oneshot::channel();
    let background = {
        let (store, launch, stored) = (store.clone(), launch.clone(), stored.clone());
        async move {
            let flow = renewing(&*store, &launch, lease, flow);
            let result = Admission::scope(admit, running.scope(flow)).await;
            if !stored.load(Ordering::Acquire) {
                let _ = answer.send(result);
                return;
            }
            let body = launch.body(Some(result.as_deref()));
            if let Err(error) = store.finish_operation(launch.name(), &body).await {
                tracing::warn!(operation = %launch.name(), %error, "an operation's end was not stored");
            }
        }
    };
    tokio::spawn(background.instrument(tracing::Span::current()));
    let Ok((target, recorded)) = admitted.await else {
        // The flow ended before it authorized its caller: its answer.
        return match answered.await {
            Ok(Err(error)) => Err(error),
            Ok(Ok(_)) => Err(Error::internal(
                "a long-running flow wrote without authorizing",
            )),
            Err(_) => Err(Error::internal(
                "a long-running flow stopped without an answer",
            )),
        };
    };
    let operation_name = operation_name(&target);
    let _ = launch.named.set((operation_name.clone(), target.clone()));
    let _ = name.set(operation_name.clone());
    let operation = StoredOperation {
        name: operation_name,
        resource_type: launch.resource_type.to_owned(),
        target,
        verb: launch.verb.to_owned(),
        done: false,
        lease: lease_until(lease),
        body: launch.body(None),
    };
    // Unstored, the flow goes no further (`recorded` is dropped).
    let recording = request_id.as_ref().map(RequestId::for_operation);
    match RequestId::scope(recording, store.insert_operation(&operation)).await {
        Ok(()) => {}
        // A twin retry started first: its operation answers.
        Err(crate::store::StoreError::DuplicateRequest) => {
            if let Some(id) = &request_id
                && let Some(first) = started_under(&*store, id).await?
            {
                return Ok(first.body);
            }
            return Err(crate::store::StoreError::DuplicateRequest.into());
        }
        Err(error) => return Err(error.into()),
    }
    stored.store(true, Ordering::Release);
    let _ = recorded.send(());
    Ok(operation.body)
}

/// The operation a request under `id` started before, if any.
async fn started_under<S: OperationStore>(
    store: &S,
    id: &RequestId,
) -> Result<Option<StoredOperation>, Error> {
    let Some(record) = store
        .operation_started_under(id.for_operation().key())
        .await?
    else {
        return Ok(None);
    };
    if record.fingerprint != id.fingerprint() {
        return Err(super::request_ids::reused());
    }
    let name = String::from_utf8(record.outcome).map_err(Error::internal)?;
    read_operation(store, &name).await.map(Some)
}

fn lease_until(lease: Duration) -> i64 {
    let lease = i64::try_from(lease.as_micros()).unwrap_or(i64::MAX);
    crate::time::now_micros().saturating_add(lease)
}

/// `flow`, renewing `launch`'s lease while it runs (once it is named).
async fn renewing<S: OperationStore, F: Future>(
    store: &S,
    launch: &Launch,
    lease: Duration,
    flow: F,
) -> F::Output {
    let mut flow = pin!(flow);
    let mut renewals = tokio::time::interval(lease / 3);
    renewals.tick().await;
    loop {
        tokio::select! {
            output = &mut flow => return output,
            _ = renewals.tick() => {
                let name = launch.name();
                if name.is_empty() {
                    continue;
                }
                if let Err(error) = store.renew_operation(name, lease_until(lease)).await {
                    tracing::warn!(operation = %name, %error, "an operation's lease was not renewed");
                }
            }
        }
    }
}

/// The operation `name`: NOT_FOUND when none is stored; one running past
/// its lease is ended as abandoned first.
pub async fn read_operation<S: OperationStore>(
    store: &S,
    name: &str,
) -> Result<StoredOperation, Error> {
    let Some(operation) = store.get_operation(name).await? else {
        return Err(Error::not_found(
            "longrunning.googleapis.com/Operation",
            name,
        ));
    };
    settle(store, operation).await
}

/// `operation` as read, or ended as abandoned when it runs past its lease.
async fn settle<S: OperationStore>(
    store: &S,
    mut operation: StoredOperation,
) -> Result<StoredOperation, Error> {
    if !operation.done && operation.lease < crate::time::now_micros() {
        let body = Operation::ended(&operation.body, &abandoned());
        if !store.finish_operation(&operation.name, &body).await? {
            // Its write ended it meanwhile.
            return Box::pin(read_operation(store, &operation.name)).await;
        }
        operation.done = true;
        operation.body = body;
    }
    Ok(operation)
}

/// Checks that `caller` has `need` on `operation`'s target: what the API
/// needs to read the resource it acts on, or to run the method that started
/// it. PERMISSION_DENIED when the API names no need (no method of it acts
/// on that type so).
pub async fn authorize_operation(
    context: &ApiContext,
    caller: &Caller,
    operation: &StoredOperation,
    need: Option<Need<'_>>,
) -> Result<(), Error> {
    let Some(need) = need else {
        return Err(Error::new(
            Code::PermissionDenied,
            "PERMISSION_DENIED",
            format!(
                "no method of this API acts on operation `{}`",
                operation.name
            ),
        ));
    };
    context.authorize(caller, need, &operation.target).await
}

/// Cancels a running operation: its write, not yet made, never will be.
/// A done operation stays as it ended.
pub async fn cancel_operation<S: OperationStore>(
    store: &S,
    operation: &StoredOperation,
) -> Result<(), Error> {
    if !operation.done {
        let body = Operation::ended(&operation.body, &cancelled());
        store.finish_operation(&operation.name, &body).await?;
    }
    Ok(())
}

/// Forgets a done operation; FAILED_PRECONDITION while it runs.
pub async fn delete_operation<S: OperationStore>(
    store: &S,
    operation: &StoredOperation,
) -> Result<(), Error> {
    if !operation.done {
        return Err(Error::failed_precondition(
            "OPERATION_RUNNING",
            format!(
                "operation `{}` is still running; cancel it first",
                operation.name
            ),
            Vec::new(),
        ));
    }
    store.delete_operation(&operation.name).await?;
    Ok(())
}

/// The operation once it is done, or as it is after `timeout` (at most
/// [`MAX_WAIT`], and that when unset), polling with backoff.
pub async fn wait_operation<S: OperationStore>(
    store: &S,
    mut operation: StoredOperation,
    timeout: Option<prost_types::Duration>,
) -> Result<StoredOperation, Error> {
    let timeout = timeout.map(Duration::try_from).transpose().map_err(|_| {
        Error::invalid_fields(vec![FieldViolation::new("timeout", "must not be negative")])
    })?;
    let deadline = tokio::time::Instant::now() + timeout.unwrap_or(MAX_WAIT).min(MAX_WAIT);
    let mut pause = Duration::from_millis(20);
    while !operation.done && tokio::time::Instant::now() < deadline {
        tokio::time::sleep_until(deadline.min(tokio::time::Instant::now() + pause)).await;
        pause = (pause * 2).min(Duration::from_secs(1));
        operation = read_operation(store, &operation.name).await?;
    }
    Ok(operation)
}

/// The fields of an operation a `ListOperations` filter (AIP-160) may
/// compare: `done = true`, `name = "*/operations/operation-1796*"`.
pub const OPERATION_FILTERABLE: &[&str] = &["name", "done"];

/// One page of the operations under `parent` (`projects/p/locations/l`,
/// or empty for those at the top) that `filter` admits (an AIP-160 filter of
/// [`OPERATION_FILTERABLE`], checked against `O`, the API's operation
/// message) and the caller may read (`readable` answers each or
/// PERMISSION_DENIED), with the next page's token.
pub async fn list_operations<O, S, F>(
    store: &S,
    parent: &str,
    filter: &str,
    page_size: i32,
    page_token: &str,
    readable: impl Fn(StoredOperation) -> F,
) -> Result<(Vec<StoredOperation>, String), Error>
where
    O: prost_reflect::ReflectMessage + Default,
    S: OperationStore,
    F: Future<Output = Result<StoredOperation, Error>>,
{
    let descriptor = O::default().descriptor();
    let kind = "longrunning.googleapis.com/Operation";
    let condition = crate::filter::check_message(descriptor, OPERATION_FILTERABLE, kind, filter)?;
    let admitted = |operation: &StoredOperation| {
        condition.as_ref().is_none_or(|condition| {
            condition.admits(&|field| match field {
                "done" => SortValue::Int(i64::from(operation.done)),
                _ => SortValue::Text(operation.name.clone()),
            })
        })
    };
    let size = match usize::try_from(page_size) {
        Ok(0) => OPERATIONS_PAGE,
        Ok(size) => size.min(OPERATIONS_PAGE * 20),
        Err(_) => {
            return Err(Error::invalid_fields(vec![FieldViolation::new(
                "pageSize",
                "must not be negative",
            )]));
        }
    };
    let prefix = match parent {
        "" => "operations/".to_owned(),
        parent => format!("{parent}/operations/"),
    };
    let mut after = decode_token(page_token, &prefix)?;
    let mut page = Vec::new();
    // Operations the caller may not read are skipped, but not without end:
    // past this many, the page ends early (AIP-158 allows it).
    let mut budget = size.saturating_mul(SCAN_FACTOR).clamp(size, MAX_SCAN);
    loop {
        if budget == 0 {
            return Ok((page, encode_token(&after)));
        }
        let batch = store.list_operations(&prefix, &after, size + 1).await?;
        budget = budget.saturating_sub(batch.len().min(size));
        let more = batch.len() > size;
        for operation in batch.into_iter().take(size) {
            after.clone_from(&operation.name);
            let operation = settle(store, operation).await;
            let operation = match operation {
                Ok(operation) if admitted(&operation) => operation,
                Ok(_) => continue,
                Err(error) if error.code() == Code::NotFound => continue,
                Err(error) => return Err(error),
            };
            match readable(operation).await {
                Ok(operation) => page.push(operation),
                Err(error) if error.code() == Code::PermissionDenied => continue,
                Err(error) => return Err(error),
            }
            if page.len() == size {
                return Ok((page, encode_token(&after)));
            }
        }
        if !more {
            return Ok((page, String::new()));
        }
    }
}

fn encode_token(after: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(after)
}

fn decode_token(token: &str, prefix: &str) -> Result<String, Error> {
    use base64::Engine;
    let after = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|after| String::from_utf8(after).ok())
        .filter(|after| after.is_empty() || after.starts_with(prefix));
    after.ok_or_else(|| {
        Error::invalid_fields(vec![FieldViolation::new(
            "pageToken",
            "is not a page token of this list",
        )])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryStore;

    fn stored(name: &str, done: bool, lease: i64) -> StoredOperation {
        StoredOperation {
            name: name.to_owned(),
            resource_type: "x/Y".to_owned(),
            target: String::new(),
            verb: "create".to_owned(),
            done,
            lease,
            body: Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_page_of_operations_reads_a_bounded_number_of_them() {
        let store = MemoryStore::new();
        let lease = crate::time::now_micros() + 60_000_000;
        for i in 0..500 {
            let name = format!("operations/{i:04}");
            store
                .insert_operation(&stored(&name, false, lease))
                .await
                .unwrap();
        }
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let denied = |_| {
            reads.fetch_add(1, Ordering::Relaxed);
            async { Err(Error::new(Code::PermissionDenied, "DENIED", "no")) }
        };
        let (page, token) =
            list_operations::<prost_types::Timestamp, _, _>(&store, "", "", 5, "", denied)
                .await
                .unwrap();
        assert!(page.is_empty());
        assert_eq!(reads.load(Ordering::Relaxed), 5 * SCAN_FACTOR);
        assert_eq!(
            decode_token(&token, "operations/").unwrap(),
            "operations/0049"
        );
        let allowed = |operation| async { Ok(operation) };
        let (page, _) =
            list_operations::<prost_types::Timestamp, _, _>(&store, "", "", 3, &token, allowed)
                .await
                .unwrap();
        let names: Vec<&str> = page.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            ["operations/0050", "operations/0051", "operations/0052"]
        );
    }

    #[tokio::test]
    async fn ended_operations_are_forgotten_after_the_retention() {
        let store = MemoryStore::new();
        let now = crate::time::now_micros();
        let old = now - i64::try_from(crate::operation::RETENTION.as_micros()).unwrap() - 1;
        store
            .insert_operation(&stored("operations/old", true, old))
            .await
            .unwrap();
        store
            .insert_operation(&stored("operations/running", false, old))
            .await
            .unwrap();
        store
            .insert_operation(&stored("operations/recent", true, now))
            .await
            .unwrap();
        store
            .insert_operation(&stored("operations/new", false, now))
            .await
            .unwrap();
        let kept = store.list_operations("operations/", "", 10).await.unwrap();
        let names: Vec<&str> = kept.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            ["operations/new", "operations/recent", "operations/running"]
        );
        // A running operation past its lease reads ABORTED.
        let read = read_operation(&store, "operations/running").await.unwrap();
        assert!(read.done);
        let Some(Outcome::Error(status)) = Operation::decode(read.body.as_slice()).unwrap().outcome
        else {
            panic!("an error")
        };
        assert_eq!(status.code, tonic::Code::Aborted as i32);
    }

    #[test]
    fn operations_are_named_under_their_targets_location() {
        let name = operation_name("projects/p/locations/us-east1/certificates/c");
        assert!(
            name.starts_with("projects/p/locations/us-east1/operations/operation-"),
            "{name}"
        );
        assert!(
            operation_name("projects/p/locations/l")
                .starts_with("projects/p/locations/l/operations/")
        );
        assert!(operation_name("shelves/s/books/b").starts_with("operations/operation-"));
        assert!(operation_name("orgs/allocations/x").starts_with("operations/"));
        assert!(operation_name("abc/def").starts_with("operations/"));
        assert_ne!(operation_name("x"), operation_name("x"));
    }
}
