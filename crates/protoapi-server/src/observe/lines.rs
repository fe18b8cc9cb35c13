//! One event, one line: the text log's writer escapes the control
//! characters an event's values carry (`\n` as `\n`, others as `\x1b`), so
//! a value a client chose (an unverified claim, a header echoed in an
//! error) can never start a line of its own and forge an entry, nor reach
//! a terminal as an escape sequence. JSON lines escape them already.

use std::io::{self, Write};

use tracing_subscriber::fmt::MakeWriter;

/// A [`MakeWriter`] whose writers escape control characters; see the
/// [module docs](self). With `ansi`, the escape character is kept, for the
/// colours the formatter writes itself.
#[derive(Clone, Copy, Debug)]
pub struct OneLine<M> {
    inner: M,
    ansi: bool,
}

impl<M> OneLine<M> {
    pub fn new(inner: M, ansi: bool) -> Self {
        OneLine { inner, ansi }
    }
}

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for OneLine<M> {
    type Writer = Escaping<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        Escaping {
            inner: self.inner.make_writer(),
            ansi: self.ansi,
        }
    }
}

/// Writes each event (one `write` of the whole formatted event) with its
/// control characters escaped, but for the line's own final `\n`.
#[derive(Debug)]
pub struct Escaping<W> {
    inner: W,
    ansi: bool,
}

impl<W: Write> Write for Escaping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let (body, end) = match buf.strip_suffix(b"\n") {
            Some(body) => (body, &b"\n"[..]),
            None => (buf, &b""[..]),
        };
        let ansi = self.ansi;
        let unsafe_byte =
            |b: &u8| (*b < 0x20 && *b != b'\t' && !(ansi && *b == 0x1b)) || *b == 0x7f;
        if !body.iter().any(unsafe_byte) {
            self.inner.write_all(buf)?;
            return Ok(buf.len());
        }
        let mut line = Vec::with_capacity(buf.len() + 16);
        for b in body {
            match b {
                b'\n' => line.extend_from_slice(b"\\n"),
                b'\r' => line.extend_from_slice(b"\\r"),
                b if unsafe_byte(b) => line.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
                b => line.push(*b),
            }
        }
        line.extend_from_slice(end);
        self.inner.write_all(&line)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(ansi: bool, event: &[u8]) -> String {
        let mut out = Vec::new();
        let mut writer = Escaping {
            inner: &mut out,
            ansi,
        };
        writer.write_all(event).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_value_cannot_start_a_line_or_reach_a_terminal() {
        let forged = b"INFO refused: issuer `x`\nINFO access status=200\r\x1b[2J\x07 end\n";
        assert_eq!(
            written(false, forged),
            "INFO refused: issuer `x`\\nINFO access status=200\\r\\x1b[2J\\x07 end\n"
        );
        assert_eq!(
            written(true, b"\x1b[32mINFO\x1b[0m a\nb\n"),
            "\x1b[32mINFO\x1b[0m a\\nb\n"
        );
        assert_eq!(written(false, b"plain\tline\n"), "plain\tline\n");
    }
}
