//! What reaches a terminal: control characters from values, files or a
//! database (ESC, OSC sequences, a bell) are shown escaped (`\x1b`) rather
//! than obeyed, so a value cannot retitle the window, rewrite the lines
//! above or hide itself. Output to a file or a pipe stays byte for byte.
//! Messages also lose every password ([`uuidforge_db::dsn::redact`]).

use std::io::{self, IsTerminal, Write};

/// Whether `c` is a control character a terminal acts on (C0 but newline
/// and tab, DEL, C1).
fn is_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || ('\u{80}'..='\u{9f}').contains(&c)
}

/// `text` with its control characters escaped.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_control(c) {
            if (c as u32) < 0x100 {
                out.push_str(&format!("\\x{:02x}", c as u32));
            } else {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A message for standard error: passwords hidden, control characters
/// escaped when standard error is a terminal.
pub fn message(text: &str) -> String {
    let text = uuidforge_db::dsn::redact(text);
    if io::stderr().is_terminal() {
        escaped(&text)
    } else {
        text
    }
}

/// A writer that escapes control characters when `escape` is set (a
/// terminal), and passes bytes through otherwise.
pub struct Safe<W: Write> {
    inner: W,
    escape: bool,
    /// The first byte of a two-byte UTF-8 sequence that ended a write (a
    /// C1 control is 0xC2 0x80..=0x9F).
    pending: Option<u8>,
}

impl<W: Write> Safe<W> {
    /// Wraps `inner`.
    pub fn new(inner: W, escape: bool) -> Self {
        Safe {
            inner,
            escape,
            pending: None,
        }
    }
}

impl<W: Write> Write for Safe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.escape {
            return self.inner.write(buf);
        }
        let mut out = Vec::with_capacity(buf.len() + 8);
        let mut bytes = buf.iter().copied().peekable();
        if let Some(first) = self.pending.take() {
            match bytes.peek() {
                Some(&b) if first == 0xc2 && (0x80..=0x9f).contains(&b) => {
                    out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
                    bytes.next();
                }
                _ => out.push(first),
            }
        }
        while let Some(b) = bytes.next() {
            match b {
                b'\n' | b'\t' => out.push(b),
                0x00..=0x1f | 0x7f => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
                0xc2 => match bytes.peek() {
                    Some(&n) if (0x80..=0x9f).contains(&n) => {
                        out.extend_from_slice(format!("\\x{n:02x}").as_bytes());
                        bytes.next();
                    }
                    Some(_) => out.push(b),
                    None => self.pending = Some(b),
                },
                _ => out.push(b),
            }
        }
        self.inner.write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(b) = self.pending.take() {
            self.inner.write_all(&[b])?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Safe<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Standard output, escaped when it is a terminal.
pub fn stdout() -> Safe<io::StdoutLock<'static>> {
    let out = io::stdout();
    let escape = out.is_terminal();
    Safe::new(out.lock(), escape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_the_rest_kept() {
        assert_eq!(
            escaped("a\x1b]0;title\x07b\tc\n\u{9b}2J é"),
            "a\\x1b]0;title\\x07b\tc\n\\x9b2J é"
        );
        let mut out = Vec::new();
        {
            let mut w = Safe::new(&mut out, true);
            w.write_all(b"x\x1b[2J\xc2").unwrap();
            w.write_all(b"\x9b\xc3\xa9\r\n").unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "x\\x1b[2J\\x9bé\\x0d\n");
        let mut raw = Vec::new();
        Safe::new(&mut raw, false).write_all(b"\x1b\x07").unwrap();
        assert_eq!(raw, b"\x1b\x07");
    }
}
