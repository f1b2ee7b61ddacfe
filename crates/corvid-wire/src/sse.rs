//! Server-sent events framing: an incremental scanner that watches a byte stream go by and
//! reports each complete `data:` payload, without holding more than the current line.

use std::sync::OnceLock;

/// The longest line the scanner keeps; a longer one is skipped (its bytes still flow on).
const MAX_LINE: usize = 8 * 1024 * 1024;

/// Scans SSE bytes chunk by chunk. Lines may end in `\n`, `\r\n` or `\r`, split anywhere.
#[derive(Debug, Default)]
pub struct SseScanner {
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a leading `\n` in the next one is the same line end.
    after_cr: bool,
    /// The current line grew past [`MAX_LINE`]; ignore it until its end.
    skipping: bool,
    /// Lines skipped for their length so far (a decoder lost an event with each).
    overlong: u64,
}

impl SseScanner {
    /// A scanner at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next chunk; `on_data` receives the payload of each `data:` line completed in
    /// it (one optional space after the colon removed), in order.
    pub fn feed(&mut self, chunk: &[u8], mut on_data: impl FnMut(&[u8])) {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        // `memchr2` looks at many bytes per step; a byte-by-byte search was most of a stream's
        // framing cost.
        while let Some(end) = memchr::memchr2(b'\n', b'\r', rest) {
            let (piece, tail) = rest.split_at(end);
            let terminator = tail[0];
            rest = &tail[1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            if self.skipping {
                self.skipping = false;
                self.line.clear();
                continue;
            }
            if self.line.is_empty() {
                emit(piece, &mut on_data);
            } else {
                self.line.extend_from_slice(piece);
                emit(&self.line, &mut on_data);
                self.line.clear();
            }
        }
        if !self.skipping {
            if self.line.len() + rest.len() > MAX_LINE {
                self.skipping = true;
                self.overlong += 1;
                self.line.clear();
            } else {
                self.line.extend_from_slice(rest);
            }
        }
    }

    /// How many lines were skipped so far for being longer than 8 MiB. The bytes still flowed
    /// on; an event decoder lost what they held.
    pub fn overlong_lines(&self) -> u64 {
        self.overlong
    }

    /// Whether the stream stopped in the middle of a line (a writer appending an event of its
    /// own must first end that line).
    pub fn mid_line(&self) -> bool {
        !self.line.is_empty() || self.skipping
    }
}

fn emit(line: &[u8], on_data: &mut impl FnMut(&[u8])) {
    if let Some(payload) = line.strip_prefix(b"data:") {
        on_data(payload.strip_prefix(b" ").unwrap_or(payload));
    }
}

/// A byte string looked for in many payloads (an event type, a key). Its searchers are built
/// on first use and kept, so each search costs only the scan.
pub struct Marker {
    needle: &'static [u8],
    forward: OnceLock<memchr::memmem::Finder<'static>>,
    backward: OnceLock<memchr::memmem::FinderRev<'static>>,
}

impl Marker {
    pub const fn new(needle: &'static [u8]) -> Self {
        Self {
            needle,
            forward: OnceLock::new(),
            backward: OnceLock::new(),
        }
    }

    /// Whether `haystack` contains the marker.
    pub fn is_in(&self, haystack: &[u8]) -> bool {
        self.forward
            .get_or_init(|| memchr::memmem::Finder::new(self.needle))
            .find(haystack)
            .is_some()
    }

    /// Where the marker's last occurrence in `haystack` ends.
    pub fn end_of_last(&self, haystack: &[u8]) -> Option<usize> {
        let start = self
            .backward
            .get_or_init(|| memchr::memmem::FinderRev::new(self.needle))
            .rfind(haystack)?;
        Some(start + self.needle.len())
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn scan(chunks: &[&[u8]]) -> Vec<String> {
        let mut scanner = SseScanner::new();
        let mut seen = Vec::new();
        for chunk in chunks {
            scanner.feed(chunk, |payload| {
                seen.push(String::from_utf8_lossy(payload).into_owned())
            });
        }
        seen
    }

    #[test]
    fn whole_events() {
        assert_eq!(
            scan(&[b"data: {\"a\":1}\n\ndata:[DONE]\n\n"]),
            ["{\"a\":1}", "[DONE]"]
        );
    }

    #[test]
    fn events_split_at_every_byte() {
        let text = b"event: x\r\ndata: one\r\n\r\n: comment\ndata: two\rdata: three\n\n";
        let expected = ["one", "two", "three"];
        for split in 0..text.len() {
            let (a, b) = text.split_at(split);
            assert_eq!(scan(&[a, b]), expected, "split at {split}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(scan(&bytes), expected);
    }

    #[test]
    fn mid_line_reports_an_unfinished_event() {
        let mut scanner = SseScanner::new();
        scanner.feed(b"data: {\"par", |_| {});
        assert!(scanner.mid_line());
        scanner.feed(b"tial\":1}\n", |_| {});
        assert!(!scanner.mid_line());
    }

    #[test]
    fn a_marker_finds_its_first_and_last_occurrence() {
        static USAGE: Marker = Marker::new(b"\"usage\"");
        let long = [b"x".repeat(100), br#""usage":1,"usage":2"#.to_vec()].concat();
        for _ in 0..2 {
            // The second round runs on the searchers kept from the first.
            assert!(USAGE.is_in(&long));
            assert!(!USAGE.is_in(b"usage without quotes"));
            assert_eq!(USAGE.end_of_last(&long), Some(long.len() - 2));
            assert_eq!(USAGE.end_of_last(br#"{"usage":{}}"#), Some(8));
            assert_eq!(USAGE.end_of_last(b""), None);
        }
    }
}
