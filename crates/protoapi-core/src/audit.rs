//! The audit log: one JSON line per write an API answered, apart from the
//! request log.
//!
//! Generated services write a line for every method that writes (Create,
//! Update, Delete, Undelete, SetIamPolicy, and custom methods other than
//! `GET`), whether it succeeded or not: the time, the caller (an identity's
//! uid, `system`, `anonymous`), the method's full name, the resource (the
//! item written, or the request's `parent` or `resource` when nothing
//! names an item), the update mask, and the canonical code of the answer.
//! For the collections of the access model (those whose items grant
//! capabilities, such as roles, and the role bindings), a line also holds
//! the item `before` (read just before the write; absent for a create) and
//! `after` (as answered; absent for a delete or a refused write).
//!
//! ```json
//! {"time":"2026-12-01T01:40:02.5Z","caller":"1c84…/5f2a…","method":"club.v1.GrantService/CreateGrant",
//!  "resource":"d3be…/899a…","code":"OK","after":{"uid":"d3be…/899a…","member":"…","role":"…"}}
//! ```
//!
//! Lines are written as each write answers, in that order, and flushed;
//! one that cannot be written is reported in the server's log (the write
//! itself has happened). A write refused to an anonymous caller is not a
//! line (the access log has it), and nothing is read for one: callers
//! without credentials cannot grow the audit log or make it read.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use prost_reflect::{DynamicMessage, ReflectMessage, Value};
use serde::Serialize;

use crate::context::Caller;
use crate::error::Error;
use crate::json::wire;
use crate::store::StoreError;

/// Where audit lines go: a file, or any writer.
#[derive(Clone)]
pub struct AuditLog {
    out: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog").finish_non_exhaustive()
    }
}

impl AuditLog {
    /// Lines written to `out`.
    pub fn new(out: impl Write + Send + 'static) -> Self {
        AuditLog {
            out: Arc::new(Mutex::new(Box::new(out))),
        }
    }

    /// Lines appended to the file at `path`, created readable by its owner
    /// only.
    pub fn append_to(path: &Path) -> std::io::Result<Self> {
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path)?;
        crate::owner_only::restrict_file(path);
        Ok(AuditLog::new(file))
    }

    fn write(&self, line: &Line<'_>) {
        let mut text = match serde_json::to_vec(line) {
            Ok(text) => text,
            Err(error) => {
                tracing::error!(method = line.method, %error, "an audit line could not be written");
                return;
            }
        };
        text.push(b'\n');
        let mut out = self
            .out
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Err(error) = out.write_all(&text).and_then(|()| out.flush()) {
            tracing::error!(method = line.method, %error, "an audit line could not be written");
        }
    }
}

/// One audit line.
#[derive(Serialize)]
struct Line<'a> {
    time: wire::Timestamp<'a>,
    caller: &'a str,
    method: &'a str,
    resource: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    mask: Option<Vec<String>>,
    code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    before: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    after: Option<serde_json::Value>,
}

/// A write being audited: started before the method runs, finished with
/// its answer.
#[derive(Debug)]
pub struct Audit {
    log: AuditLog,
    method: &'static str,
    /// The item's key, or the parent, from the request.
    key: String,
    mask: Option<Vec<String>>,
    before: Option<serde_json::Value>,
}

/// The request fields that name what a write acts on, in order of preference.
const KEY_FIELDS: [&str; 5] = ["uid", "name", "id", "resource", "parent"];

impl Audit {
    /// A write of `method` (its full name) taking `request`; none for a
    /// dry run (AIP-163 `validate_only`, or a flow run as one), which
    /// writes nothing.
    pub fn start<M: ReflectMessage>(
        log: &AuditLog,
        method: &'static str,
        request: &M,
    ) -> Option<Self> {
        if crate::dry_run::DryRun::current() {
            return None;
        }
        let dynamic = request.transcode_to_dynamic();
        let validates = (request.descriptor().get_field_by_name("validate_only"))
            .is_some_and(|field| dynamic.get_field(&field).as_bool() == Some(true));
        if validates {
            return None;
        }
        let key = first_text(&dynamic, &KEY_FIELDS).unwrap_or_default();
        let mask = (request.descriptor())
            .get_field_by_name("update_mask")
            .filter(|field| dynamic.has_field(field))
            .and_then(|field| {
                let mask = dynamic.get_field(&field);
                let paths = mask.as_message()?.get_field_by_name("paths")?;
                let paths = paths.as_list()?.iter();
                Some(
                    paths
                        .filter_map(|path| path.as_str().map(str::to_owned))
                        .collect(),
                )
            });
        Some(Audit {
            log: log.clone(),
            method,
            key,
            mask,
            before: None,
        })
    }

    /// The key of the item the request names (or its parent).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Keeps the item as it was before the write (read from storage).
    pub fn before<R: ReflectMessage>(mut self, read: Result<Option<R>, StoreError>) -> Self {
        self.before = read.ok().flatten().as_ref().and_then(json);
        self
    }

    /// Writes the line of the write's `answer` to `caller`; `after`: the
    /// answer is the item written, kept in the line.
    pub fn finish<T: ReflectMessage>(
        self,
        caller: &Caller,
        answer: &Result<T, Error>,
        after: bool,
    ) {
        if caller.is_anonymous() && answer.is_err() {
            return;
        }
        let caller = caller.log_name().unwrap_or("anonymous");
        let written = answer.as_ref().ok();
        // A create names the item it made.
        let created =
            written.and_then(|item| first_text(&item.transcode_to_dynamic(), &KEY_FIELDS[..3]));
        let now = crate::time::now();
        self.log.write(&Line {
            time: wire::Timestamp(&now),
            caller,
            method: self.method,
            resource: created.as_deref().unwrap_or(&self.key),
            mask: self.mask,
            code: answer
                .as_ref()
                .err()
                .map_or("OK", |error| error.code().name()),
            before: self.before,
            after: written.filter(|_| after).and_then(json),
        });
    }
}

/// The first of the text fields `names` that `message` has and sets.
fn first_text(message: &DynamicMessage, names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| {
        let field = message.descriptor().get_field_by_name(name)?;
        match &*message.get_field(&field) {
            Value::String(text) if !text.is_empty() => Some(text.clone()),
            _ => None,
        }
    })
}

/// `message` in proto3 JSON, fields at their defaults included (a field
/// cleared shows as such between before and after).
fn json<M: ReflectMessage>(message: &M) -> Option<serde_json::Value> {
    let options = prost_reflect::SerializeOptions::new().skip_default_fields(false);
    (message.transcode_to_dynamic())
        .serialize_with_options(serde_json::value::Serializer, &options)
        .ok()
}
