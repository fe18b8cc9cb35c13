//! Log lines written in batches by a thread of their own.
//!
//! A request's line is appended to a shared buffer (one uncontended lock
//! and a copy); the writer thread wakes when the buffer stops being empty,
//! lets lines gather for [`GATHER`], then writes all of them with one
//! `write`. Under load that is a few hundred wake-ups and writes a second
//! rather than one of each per line, as a channel to a writer thread costs.
//! When the output falls behind (a pipe nobody reads, say) and the buffer
//! holds [`BatchWriter::new`]'s limit, new lines are dropped and counted:
//! requests never wait for the log.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// How long the writer lets lines gather after the first one arrives.
pub const GATHER: Duration = Duration::from_millis(5);

/// Where log lines go; a [`MakeWriter`] for `tracing-subscriber`. See the
/// [module docs](self).
#[derive(Clone, Debug)]
pub struct BatchWriter {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when lines arrive in an empty buffer, and at the end.
    arrived: Condvar,
    dropped: AtomicU64,
    limit: usize,
}

#[derive(Debug, Default)]
struct State {
    lines: Vec<u8>,
    closing: bool,
}

/// The writer thread; dropping it writes the lines still waiting and ends
/// the thread.
#[derive(Debug)]
pub struct BatchGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl BatchWriter {
    /// Lines for `out`, holding at most `limit` bytes while they wait.
    pub fn new(out: impl Write + Send + 'static, limit: usize) -> (BatchWriter, BatchGuard) {
        let shared = Arc::new(Shared {
            limit,
            ..Shared::default()
        });
        let thread = std::thread::Builder::new()
            .name("log-writer".to_owned())
            .spawn({
                let shared = Arc::clone(&shared);
                move || shared.write_batches(out)
            })
            .expect("the log writer thread starts");
        let guard = BatchGuard {
            shared: Arc::clone(&shared),
            thread: Some(thread),
        };
        (BatchWriter { shared }, guard)
    }

    /// Adds one whole line (or counts it dropped), as a writer of
    /// [`MakeWriter::make_writer`] does.
    pub(crate) fn append(&self, line: &[u8]) {
        self.shared.append(line);
    }

    /// Lines dropped so far because the buffer was full.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Adds one line (one formatted event), or counts it dropped.
    fn append(&self, line: &[u8]) {
        let mut state = self.lock();
        if state.lines.len() + line.len() > self.limit {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let was_empty = state.lines.is_empty();
        state.lines.extend_from_slice(line);
        drop(state);
        if was_empty {
            self.arrived.notify_one();
        }
    }

    /// The writer thread: waits for lines, lets more gather, writes them.
    fn write_batches(&self, mut out: impl Write) {
        let mut batch = Vec::new();
        loop {
            let mut state = self.lock();
            while state.lines.is_empty() && !state.closing {
                state = (self.arrived.wait(state)).unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            let closing = state.closing;
            if !closing {
                drop(state);
                std::thread::sleep(GATHER);
                state = self.lock();
            }
            std::mem::swap(&mut batch, &mut state.lines);
            drop(state);
            // Nothing to report a failed write to but the log itself.
            let _ = out.write_all(&batch).and_then(|()| out.flush());
            batch.clear();
            if closing && self.lock().lines.is_empty() {
                return;
            }
        }
    }
}

impl Drop for BatchGuard {
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.arrived.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One event's writer: [`Write::write`] takes the whole formatted event.
#[derive(Debug)]
pub struct BatchLine<'a> {
    shared: &'a Shared,
}

impl<'a> MakeWriter<'a> for BatchWriter {
    type Writer = BatchLine<'a>;

    fn make_writer(&'a self) -> BatchLine<'a> {
        BatchLine {
            shared: &self.shared,
        }
    }
}

impl Write for BatchLine<'_> {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        self.shared.append(line);
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An output whose writes are recorded, each batch apart.
    #[derive(Clone, Default)]
    struct Recorded(Arc<Mutex<Vec<Vec<u8>>>>);

    impl Write for Recorded {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().push(buf.to_vec());
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_are_written_in_batches_in_order_and_dropped_when_full() {
        let out = Recorded::default();
        let (writer, guard) = BatchWriter::new(out.clone(), 64);
        for n in 0..10 {
            let line = format!("line {n}\n");
            writer.make_writer().write_all(line.as_bytes()).unwrap();
        }
        // 7 bytes a line: the eleventh line would pass the 64 bytes held.
        assert!(writer.dropped() <= 1);
        drop(guard);
        let batches = out.0.lock().unwrap().clone();
        assert!(batches.len() < 10, "one write per line: {batches:?}");
        let text = String::from_utf8(batches.concat()).unwrap();
        let kept = 10 - writer.dropped() as usize;
        let expected: String = (0..kept).map(|n| format!("line {n}\n")).collect();
        assert_eq!(text, expected);

        let (writer, guard) = BatchWriter::new(io::sink(), 16);
        for _ in 0..5 {
            writer.make_writer().write_all(b"0123456789\n").unwrap();
        }
        drop(guard);
        assert!(writer.dropped() >= 3, "{} dropped", writer.dropped());
    }
}
