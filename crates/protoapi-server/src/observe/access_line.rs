//! Access lines written straight into the text log's batch.
//!
//! An access line is written for every request. As a `tracing` event it
//! pays the event's dispatch, the filter's visit, the formatter's field
//! visitor and a thread-local buffer before it reaches the log's batch.
//! When the server's own text log is installed ([`install`], done by the
//! server flags' `init_logs`, never for a terminal's coloured lines), the
//! access layer formats the line itself, in the same text the event would
//! have become (`TextLines`), into a buffer of its thread, and appends it
//! to the batch ([`BatchWriter`]): one lock and a copy. The filter still
//! decides: a line is written only when target `access` is enabled at
//! `INFO`. Otherwise (JSON lines, a subscriber of the application's own)
//! the line is the event, as before.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::batch::BatchWriter;
use super::text::ACCESS;

/// The installed text log's batch, if any.
static INSTALLED: OnceLock<BatchWriter> = OnceLock::new();

/// Has access lines written straight into `writer`, the batch of the text
/// log installed without colours. The first installation holds.
pub fn install(writer: BatchWriter) {
    let _ = INSTALLED.set(writer);
}

/// What one access line says (see [`access`](super::access)).
pub(crate) struct AccessLine<'a> {
    pub route: &'a str,
    pub method: &'a str,
    pub status: u16,
    pub code: &'a str,
    pub latency: Duration,
    pub caller: &'a str,
    pub request_id: &'a str,
    pub trace_id: &'a str,
}

impl AccessLine<'_> {
    /// Writes the line: straight into the installed batch, else as an
    /// `INFO` event on target `access`.
    pub(crate) fn write(&self) {
        if !tracing::enabled!(target: ACCESS, tracing::Level::INFO) {
            return;
        }
        match INSTALLED.get() {
            Some(batch) => LINE.with_borrow_mut(|line| {
                line.clear();
                self.text(line, SystemTime::now());
                batch.append(line.as_bytes());
            }),
            None => self.event(),
        }
    }

    fn event(&self) {
        tracing::info!(
            target: ACCESS,
            parent: None,
            route = self.route,
            method = self.method,
            status = self.status,
            code = self.code,
            // To the microsecond: `0.135`, not `0.13472399999999998`.
            latency_ms = self.latency.as_micros() as f64 / 1000.0,
            caller = self.caller,
            request_id = self.request_id,
            trace_id = self.trace_id,
            "request"
        );
    }

    /// The line as `TextLines` formats the event, `\n` included.
    fn text(&self, line: &mut String, now: SystemTime) {
        stamp(line, now);
        line.push_str("  INFO access: request");
        field(line, "route", self.route);
        field(line, "method", self.method);
        line.push_str(" status=");
        line.push_str(itoa::Buffer::new().format(self.status));
        field(line, "code", self.code);
        line.push_str(" latency_ms=");
        milliseconds(line, self.latency);
        field(line, "caller", self.caller);
        field(line, "request_id", self.request_id);
        field(line, "trace_id", self.trace_id);
        line.push('\n');
    }
}

thread_local! {
    /// The line being written, reused by the thread's requests.
    static LINE: RefCell<String> = RefCell::new(String::with_capacity(256));
    /// The time stamp's text up to its seconds (`2026-11-30T16:24:25.`),
    /// and the second it stands for.
    static SECOND: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
}

/// The time stamp `tracing-subscriber`'s `SystemTime` writes
/// (`2026-11-30T16:24:25.123456Z`), its text up to the seconds formatted
/// once a second.
fn stamp(line: &mut String, now: SystemTime) {
    let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    SECOND.with_borrow_mut(|(second, text)| {
        if *second != since.as_secs() {
            *second = since.as_secs();
            text.clear();
            let at = i64::try_from(since.as_secs())
                .ok()
                .and_then(|seconds| time::OffsetDateTime::from_unix_timestamp(seconds).ok())
                .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
            let _ = write!(
                text,
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.",
                at.year(),
                u8::from(at.month()),
                at.day(),
                at.hour(),
                at.minute(),
                at.second()
            );
        }
        line.push_str(text);
    });
    let _ = write!(line, "{:06}Z", since.subsec_micros());
}

/// ` key=value`, the value quoted as `TextLines` quotes it.
fn field(line: &mut String, key: &str, value: &str) {
    line.push(' ');
    line.push_str(key);
    line.push('=');
    if super::text::plain(value) {
        line.push_str(value);
    } else {
        let _ = write!(line, "{value:?}");
    }
}

/// `latency` in milliseconds to the microsecond, as an `f64` displays it
/// (`0.135`, `12.5`, `3`).
fn milliseconds(line: &mut String, latency: Duration) {
    let micros = latency.as_micros();
    line.push_str(itoa::Buffer::new().format(micros / 1000));
    let mut fraction = micros % 1000;
    if fraction != 0 {
        line.push('.');
        let mut place = 100;
        while fraction != 0 {
            line.push(char::from(b'0' + (fraction / place) as u8));
            fraction %= place;
            place /= 10;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::text::TextLines;
    use crate::observe::text::kept::Kept;

    fn line(caller: &str, latency: Duration) -> AccessLine<'_> {
        AccessLine {
            route: "/v1/things/{*path}",
            method: "GET",
            status: 404,
            code: "",
            latency,
            caller,
            request_id: "0123456789abcdef",
            trace_id: "00000000000000000000000000000001",
        }
    }

    #[test]
    fn the_line_is_the_text_the_event_would_have_become() {
        for (caller, latency) in [
            ("-", Duration::from_micros(135)),
            ("said \"hi\"\n", Duration::from_micros(12_500)),
            ("a".repeat(40).as_str(), Duration::from_millis(3)),
        ]
        .map(|(caller, latency)| (caller.to_owned(), latency))
        {
            let kept = Kept::default();
            let subscriber = tracing_subscriber::fmt()
                .event_format(TextLines::new(false))
                .with_writer(kept.clone())
                .finish();
            tracing::subscriber::with_default(subscriber, || line(&caller, latency).event());
            let event = String::from_utf8(kept.0.lock().unwrap().clone()).unwrap();
            let mut direct = String::new();
            line(&caller, latency).text(&mut direct, SystemTime::now());
            let (event_time, event_rest) = event.split_once("Z ").unwrap();
            let (direct_time, direct_rest) = direct.split_once("Z ").unwrap();
            assert_eq!(direct_rest, event_rest);
            assert_eq!(
                direct_time.len(),
                event_time.len(),
                "{direct_time} {event_time}"
            );
            assert_eq!(direct_time[..16], event_time[..16], "the same minute");
        }
    }

    #[test]
    fn time_stamps_are_formatted_once_a_second() {
        let at = |micros: u64| UNIX_EPOCH + Duration::from_micros(micros);
        let stamped = |time| {
            let mut text = String::new();
            stamp(&mut text, time);
            text
        };
        assert_eq!(
            stamped(at(1_796_056_465_000_123)),
            "2026-11-30T16:34:25.000123Z"
        );
        assert_eq!(
            stamped(at(1_796_056_465_999_999)),
            "2026-11-30T16:34:25.999999Z"
        );
        assert_eq!(
            stamped(at(1_796_056_466_000_000)),
            "2026-11-30T16:34:26.000000Z"
        );
        assert_eq!(stamped(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
    }

    #[test]
    fn latencies_read_as_their_milliseconds() {
        let shown = |micros| {
            let mut text = String::new();
            milliseconds(&mut text, Duration::from_micros(micros));
            text
        };
        for (micros, text) in [
            (0, "0"),
            (135, "0.135"),
            (12_500, "12.5"),
            (3_000, "3"),
            (1_000_001, "1000.001"),
        ] {
            assert_eq!(shown(micros), text);
            assert_eq!(shown(micros), (micros as f64 / 1000.0).to_string());
        }
    }
}
