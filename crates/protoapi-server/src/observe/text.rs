//! The text log's access lines, written without the general formatter.
//!
//! An access line is written for every request, so its cost is every
//! request's: [`TextLines`] writes the events of target `access` itself (the
//! time, level and target as the default format does, then `key=value`
//! fields, a value quoted only when it holds a space, quote, `=`, backslash
//! or control character; integers and booleans through `Visit`'s defaults),
//! and hands every other event to the default text format.
//! With ANSI colours on (a terminal), every event takes the default format.
//! The fields of spans and other events are written as the default format
//! writes them, without the `otel.*` ones ([`TextFields`]).

use std::fmt;

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::field::{MakeVisitor, VisitFmt, VisitOutput};
use tracing_subscriber::fmt::FmtContext;
use tracing_subscriber::fmt::format::{self, FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::registry::LookupSpan;

/// The target of access lines (see [`access`](super::access)).
pub const ACCESS: &str = "access";

/// The text format: access lines written directly, other events by the
/// default format; see the [module docs](self).
#[derive(Debug)]
pub struct TextLines {
    default: format::Format,
    ansi: bool,
}

impl TextLines {
    /// Lines with ANSI colours if `ansi`.
    pub fn new(ansi: bool) -> Self {
        TextLines {
            default: format::Format::default().with_ansi(ansi),
            ansi,
        }
    }
}

impl<S, N> FormatEvent<S, N> for TextLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        context: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let metadata = event.metadata();
        if self.ansi || metadata.target() != ACCESS {
            return self.default.format_event(context, writer, event);
        }
        SystemTime.format_time(&mut writer)?;
        write!(writer, " {:>5} {}:", metadata.level().as_str(), ACCESS)?;
        let mut fields = Fields {
            writer: &mut writer,
            result: Ok(()),
        };
        event.record(&mut fields);
        fields.result?;
        writer.write_char('\n')
    }
}

/// The text log's fields, of spans and events: the default format's
/// output without the `otel.*` fields, which instruct the OpenTelemetry
/// layer (a request span's `otel.kind`) and tell a reader nothing. A span's
/// fields are formatted when it starts, so on the request span, which every
/// request opens, this is a cost of every request.
#[derive(Debug, Default)]
pub struct TextFields(format::DefaultFields);

impl<'w> MakeVisitor<Writer<'w>> for TextFields {
    type Visitor = SansOtel<format::DefaultVisitor<'w>>;

    fn make_visitor(&self, target: Writer<'w>) -> Self::Visitor {
        SansOtel(self.0.make_visitor(target))
    }
}

/// A visitor that passes every field but the `otel.*` ones on. It
/// forwards what the default format's visitor writes itself (strings,
/// errors, the rest through `Debug`); integers, booleans and floats reach
/// `record_debug` through `Visit`'s defaults, as they do there.
#[derive(Debug)]
pub struct SansOtel<V>(V);

impl<V> SansOtel<V> {
    fn passes(field: &Field) -> bool {
        !field.name().starts_with("otel.")
    }
}

impl<V: Visit> Visit for SansOtel<V> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if Self::passes(field) {
            self.0.record_str(field, value);
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        if Self::passes(field) {
            self.0.record_error(field, value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if Self::passes(field) {
            self.0.record_debug(field, value);
        }
    }
}

impl<V: VisitOutput<fmt::Result>> VisitOutput<fmt::Result> for SansOtel<V> {
    fn finish(self) -> fmt::Result {
        self.0.finish()
    }
}

impl<V: VisitFmt> VisitFmt for SansOtel<V> {
    fn writer(&mut self) -> &mut dyn fmt::Write {
        self.0.writer()
    }
}

/// Writes each field as ` key=value` (the message as ` value`).
struct Fields<'a, 'w> {
    writer: &'a mut Writer<'w>,
    result: fmt::Result,
}

impl Fields<'_, '_> {
    fn key(&mut self, field: &Field) -> fmt::Result {
        self.writer.write_char(' ')?;
        if field.name() != "message" {
            self.writer.write_str(field.name())?;
            self.writer.write_char('=')?;
        }
        Ok(())
    }

    fn write(&mut self, field: &Field, value: impl FnOnce(&mut Writer<'_>) -> fmt::Result) {
        if self.result.is_ok() {
            self.result = self.key(field).and_then(|()| value(self.writer));
        }
    }
}

/// Whether `value` is written as it is: not empty, and no byte a reader
/// could take for the end of the value or of the line.
pub(super) fn plain(value: &str) -> bool {
    !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'=' && b != b'\\')
}

impl Visit for Fields<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.write(field, |writer| {
            if plain(value) {
                writer.write_str(value)
            } else {
                write!(writer, "{value:?}")
            }
        });
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.write(field, |writer| write!(writer, "{value}"));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.write(field, |writer| write!(writer, "{value:?}"));
    }
}

/// A writer that keeps what it is given, for tests to read.
#[cfg(test)]
pub(super) mod kept {
    use std::io;
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::fmt::MakeWriter;

    /// Lines written, kept for the test to read.
    #[derive(Clone, Default)]
    pub(in crate::observe) struct Kept(pub Arc<Mutex<Vec<u8>>>);

    impl io::Write for Kept {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Kept {
        type Writer = Kept;

        fn make_writer(&'a self) -> Kept {
            self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::kept::Kept;
    use super::*;

    fn logged(ansi: bool, log: impl FnOnce()) -> String {
        let kept = Kept::default();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(ansi)
            .fmt_fields(TextFields::default())
            .event_format(TextLines::new(ansi))
            .with_writer(kept.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, log);
        String::from_utf8(kept.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn access_lines_quote_only_values_that_need_it() {
        let text = logged(false, || {
            tracing::info!(
                target: "access",
                route = %"/v1/things/{*path}",
                status = 404u16,
                code = "",
                latency_ms = 0.125,
                caller = "said \"hi\"\n",
                "request"
            );
        });
        let line = text.split_once("Z ").unwrap().1;
        assert_eq!(
            line,
            " INFO access: request route=/v1/things/{*path} status=404 code=\"\" \
             latency_ms=0.125 caller=\"said \\\"hi\\\"\\n\"\n"
        );
    }

    #[test]
    fn other_events_and_terminals_take_the_default_format() {
        let text = logged(
            false,
            || tracing::warn!(target: "storage", pool = 3, "slow"),
        );
        assert!(text.ends_with(" WARN storage: slow pool=3\n"), "{text}");
        let text = logged(
            true,
            || tracing::info!(target: "access", status = 200, "request"),
        );
        assert!(text.contains("\x1b["), "{text}");
    }

    #[test]
    fn spans_show_their_fields_but_not_the_exporters() {
        let text = logged(false, || {
            let span = tracing::info_span!(
                "request",
                otel.kind = "server",
                request_id = %"7a1dae2ac57c7ae5",
                retry = 2
            );
            span.in_scope(|| {
                tracing::warn!(target: "storage", pool = 3, otel.status_code = "ERROR", "slow");
            });
        });
        assert!(
            text.ends_with(
                " WARN request{request_id=7a1dae2ac57c7ae5 retry=2}: storage: slow pool=3\n"
            ),
            "{text:?}"
        );
    }
}
