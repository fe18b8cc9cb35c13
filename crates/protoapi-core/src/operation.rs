//! AIP-151 long-running operations: what storage keeps of them and what a
//! store's write reads while it runs as one.
//!
//! A standard method answering `google.longrunning.Operation` runs its flow
//! in the background (`standard::start_operation`). Once the flow has
//! authorized its caller ([`admitted`], which `ApiContext::authorize` calls),
//! the operation is stored running, with a lease its runner renews; the
//! flow's write then ends it in the write's own transaction
//! ([`Running::current`]), so an operation reads done exactly when its write
//! is made. An operation still running past its lease was abandoned (its
//! server stopped): readers end it as `ABORTED`, and a write arriving after
//! that finds it done and is undone. Cancelling ends it the same way.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::error::{Code, Error};
use crate::store::StoreError;

/// How long a running operation's runner holds it without renewing, unless
/// the API says otherwise (`ApiContext::with_operation_lease`).
pub const OPERATION_LEASE: Duration = Duration::from_secs(30);

/// How long a done operation is kept: storage forgets older ones as it
/// stores new ones.
pub const RETENTION: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// The longest a `WaitOperation` waits.
pub const MAX_WAIT: Duration = Duration::from_secs(30);

/// An operation as storage keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredOperation {
    /// Its resource name, e.g. `projects/p/locations/l/operations/{id}`.
    pub name: String,
    /// The `Resource::TYPE` of what it acts on, whose Get decides who may
    /// read it.
    pub resource_type: String,
    /// The key its method was authorized on (the parent of a create, the
    /// item of an update or delete).
    pub target: String,
    /// What its method does: `create`, `update` or `delete`.
    pub verb: String,
    pub done: bool,
    /// While running: until when (microseconds since the epoch) its runner
    /// holds it; once done, when it ended.
    pub lease: i64,
    /// The `google.longrunning.Operation`, encoded.
    pub body: Vec<u8>,
}

/// Storage of operations, beside the resources they act on. The library's
/// stores implement it; a hand-written backend serving long-running methods
/// does too, and ends the [`Running::current`] operation in the same atomic
/// step as the write it commits (failing that write with
/// `StoreError::OperationEnded` when the operation is done already).
pub trait OperationStore: Send + Sync + 'static {
    /// Stores a new operation, forgetting a few that ended more than
    /// [`RETENTION`] ago. Under a current request id
    /// ([`crate::request_id::RequestId::current`], the one
    /// `RequestId::for_operation` made), records its name as the id's
    /// outcome in the same atomic step, failing with
    /// `StoreError::DuplicateRequest` when the id holds an unexpired record.
    fn insert_operation(
        &self,
        operation: &StoredOperation,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        let _ = operation;
        async { Err(StoreError::Unimplemented) }
    }

    /// What `insert_operation` recorded under a request id's key (the
    /// operation's name, UTF-8), unexpired; stores keeping no request ids
    /// answer `None`.
    fn operation_started_under(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<crate::request_id::Recorded>, StoreError>> + Send {
        let _ = key;
        async { Ok(None) }
    }

    /// The operation with this name, if stored.
    fn get_operation(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<StoredOperation>, StoreError>> + Send {
        let _ = name;
        async { Err(StoreError::Unimplemented) }
    }

    /// At most `limit` operations whose names start with `prefix` and sort
    /// after `after`, in name order.
    fn list_operations(
        &self,
        prefix: &str,
        after: &str,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<StoredOperation>, StoreError>> + Send {
        let _ = (prefix, after, limit);
        async { Err(StoreError::Unimplemented) }
    }

    /// Ends a running operation with `body` (and its `lease` set to when it
    /// ended), atomically with respect to the write that would end it:
    /// `false` when it is done already or missing.
    fn finish_operation(
        &self,
        name: &str,
        body: &[u8],
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        let _ = (name, body);
        async { Err(StoreError::Unimplemented) }
    }

    /// Extends a running operation's lease to `lease`.
    fn renew_operation(
        &self,
        name: &str,
        lease: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        let _ = (name, lease);
        async { Err(StoreError::Unimplemented) }
    }

    /// Forgets a done operation: `false` when none has this name.
    fn delete_operation(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        let _ = name;
        async { Err(StoreError::Unimplemented) }
    }
}

/// `google.longrunning.Operation` on the wire, as the runtime writes it;
/// generated code decodes it as the API's own message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Operation {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub metadata: Option<prost_types::Any>,
    #[prost(bool, tag = "3")]
    pub done: bool,
    #[prost(oneof = "Outcome", tags = "4, 5")]
    pub outcome: Option<Outcome>,
}

/// How a done operation ended.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Outcome {
    #[prost(message, tag = "4")]
    Error(tonic_types::Status),
    #[prost(message, tag = "5")]
    Response(prost_types::Any),
}

impl Operation {
    /// `body` (an encoded operation) ended by `error`.
    pub fn ended(body: &[u8], error: &Error) -> Vec<u8> {
        let mut operation = <Operation as prost::Message>::decode(body).unwrap_or_default();
        operation.done = true;
        operation.outcome = Some(Outcome::Error(status(error)));
        prost::Message::encode_to_vec(&operation)
    }
}

/// `operation` (an API's `google.longrunning.Operation`) once done: `get`
/// reads it again by name, polled with backoff (100 ms, doubling, at most
/// [`MAX_POLL`] between reads).
pub async fn wait<O, F, Fut>(operation: O, get: F) -> Result<Operation, Error>
where
    O: prost::Message,
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<O, Error>>,
{
    let wire = |operation: O| {
        <Operation as prost::Message>::decode(operation.encode_to_vec().as_slice())
            .map_err(Error::internal)
    };
    let mut operation = wire(operation)?;
    let mut pause = Duration::from_millis(100);
    while !operation.done {
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(MAX_POLL);
        operation = wire(get(operation.name.clone()).await?)?;
    }
    Ok(operation)
}

/// The longest pause between two reads of an operation [`wait`] polls.
pub const MAX_POLL: Duration = Duration::from_secs(5);

/// What a done `operation` made (its response, decoded as `T`), or the
/// error it ended with.
pub fn response<T: prost::Message + Default>(operation: Operation) -> Result<T, Error> {
    match operation.outcome {
        Some(Outcome::Response(any)) => T::decode(any.value.as_slice()).map_err(Error::internal),
        Some(Outcome::Error(status)) => {
            let code = tonic::Code::from_i32(status.code);
            let message = status.message.clone();
            let details = prost::Message::encode_to_vec(&status);
            let status = tonic::Status::with_details(code, message, details.into());
            Err(Error::from_grpc_status(&status))
        }
        None => Err(Error::internal(format!(
            "operation `{}` is not done",
            operation.name
        ))),
    }
}

/// `error` as a `google.rpc.Status` with its details.
pub fn status(error: &Error) -> tonic_types::Status {
    let status = tonic::Status::from(error.clone());
    prost::Message::decode(status.details()).unwrap_or_else(|_| tonic_types::Status {
        code: status.code() as i32,
        message: status.message().to_owned(),
        details: Vec::new(),
    })
}

/// The error an abandoned operation ends with.
pub fn abandoned() -> Error {
    Error::new(
        Code::Aborted,
        "OPERATION_ABANDONED",
        "the server running this operation stopped before it finished; what it started was \
         not made",
    )
}

/// The error a cancelled operation ends with.
pub fn cancelled() -> Error {
    Error::new(
        Code::Cancelled,
        "OPERATION_CANCELLED",
        "the operation was cancelled before it finished; what it started was not made",
    )
}

tokio::task_local! {
    static RUNNING: Running;
    static ADMISSION: Admission;
}

/// The body of an operation ended by a write, from the write's outcome.
pub(crate) type DoneBody = Arc<dyn Fn(&[u8]) -> Vec<u8> + Send + Sync>;

/// The operation a flow runs as, for the store to end with the write it
/// commits. Its name is set once the flow is admitted (stored); a write
/// before that ends nothing and is refused.
#[derive(Clone)]
pub struct Running {
    name: Arc<OnceLock<String>>,
    done: DoneBody,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("name", &self.name())
            .finish()
    }
}

impl Running {
    pub(crate) fn new(name: Arc<OnceLock<String>>, done: DoneBody) -> Self {
        Running { name, done }
    }

    /// The operation the write running on this task ends, if any.
    pub fn current() -> Option<Running> {
        RUNNING.try_with(Clone::clone).ok()
    }

    /// Its name; empty until it is stored.
    pub fn name(&self) -> &str {
        self.name.get().map_or("", String::as_str)
    }

    /// The operation's body once a write with `outcome` (the item written
    /// or deleted, encoded) ends it.
    pub fn done_body(&self, outcome: &[u8]) -> Vec<u8> {
        (self.done)(outcome)
    }

    pub(crate) async fn scope<F: Future>(self, flow: F) -> F::Output {
        RUNNING.scope(self, flow).await
    }
}

/// A flow's report that it authorized its caller on a target, with the
/// channel on which it waits until its operation is stored.
pub(crate) type Admitted = oneshot::Sender<(String, oneshot::Sender<()>)>;

/// The handshake between a method answering an operation and its flow in
/// the background: the flow reports that its caller is authorized, and on
/// what, and waits until the operation is stored.
pub(crate) struct Admission(Mutex<Option<Admitted>>);

impl Admission {
    pub(crate) async fn scope<F: Future>(admitted: Admitted, flow: F) -> F::Output {
        ADMISSION
            .scope(Admission(Mutex::new(Some(admitted))), flow)
            .await
    }
}

/// Called once a flow has authorized its caller on `target` (the first
/// time: the key its method acts on): when the flow runs as an operation
/// not yet stored, waits until it is, on that target. ABORTED when it could
/// not be stored (the flow then writes nothing).
pub async fn admitted(target: &str) -> Result<(), Error> {
    let sender = ADMISSION
        .try_with(|admission| {
            admission
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take()
        })
        .ok()
        .flatten();
    let Some(sender) = sender else {
        return Ok(());
    };
    let (stored, recorded) = oneshot::channel();
    if sender.send((target.to_owned(), stored)).is_err() {
        return Err(abandoned());
    }
    recorded.await.map_err(|_| abandoned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ended_body_keeps_the_name_and_metadata_and_carries_the_error() {
        let running = Operation {
            name: "operations/1".into(),
            metadata: Some(prost_types::Any {
                type_url: "type.googleapis.com/x.Meta".into(),
                value: vec![8, 1],
            }),
            done: false,
            outcome: None,
        };
        let ended = Operation::ended(&prost::Message::encode_to_vec(&running), &cancelled());
        let ended = <Operation as prost::Message>::decode(ended.as_slice()).unwrap();
        assert!(ended.done);
        assert_eq!(
            (ended.name.as_str(), &ended.metadata),
            ("operations/1", &running.metadata)
        );
        let Some(Outcome::Error(status)) = ended.outcome else {
            panic!("an error outcome")
        };
        assert_eq!(status.code, tonic::Code::Cancelled as i32);
        assert!(!status.details.is_empty(), "the ErrorInfo is kept");
    }

    #[test]
    fn a_done_operation_answers_its_response_or_its_error() {
        let done = |outcome| Operation {
            name: "operations/1".into(),
            metadata: None,
            done: true,
            outcome: Some(outcome),
        };
        let any = prost_types::Any {
            type_url: "type.googleapis.com/google.protobuf.Timestamp".into(),
            value: prost::Message::encode_to_vec(&prost_types::Timestamp {
                seconds: 7,
                nanos: 0,
            }),
        };
        let made: prost_types::Timestamp = response(done(Outcome::Response(any))).unwrap();
        assert_eq!(made.seconds, 7);
        let error = response::<()>(done(Outcome::Error(status(&cancelled())))).unwrap_err();
        assert_eq!(
            (error.code(), error.reason()),
            (Code::Cancelled, "OPERATION_CANCELLED")
        );
        let running = Operation {
            done: false,
            outcome: None,
            ..done(Outcome::Response(Default::default()))
        };
        assert_eq!(response::<()>(running).unwrap_err().code(), Code::Internal);
    }
}
