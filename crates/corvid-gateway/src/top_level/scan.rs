//! A strict JSON scanner that validates a whole body and keeps only where each top-level
//! field's key and value lie. It accepts exactly what serde_json accepts when it reads a UTF-8
//! body into raw values (RFC 8259; escapes checked, `\u` surrogates not paired), and does it in
//! one pass without building anything. Strings, which are most of a chat request, are skipped
//! 16 bytes at a time while they are ASCII; UTF-8 is checked only where a string has other
//! bytes (outside strings, JSON is ASCII).

use std::fmt;

/// Where one top-level field lies in the body: the key without its quotes, and the value.
#[derive(Debug, Clone, Copy)]
pub(super) struct FieldSpan {
    pub(super) key: (usize, usize),
    /// The key has a backslash escape and must be decoded.
    pub(super) key_escaped: bool,
    pub(super) value: (usize, usize),
}

/// Why a body is not one JSON object, and where (1-based, in bytes, as serde_json counts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScanError {
    what: &'static str,
    line: usize,
    column: usize,
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.what, self.line, self.column
        )
    }
}

impl std::error::Error for ScanError {}

/// What a body with bytes that are not UTF-8 is told.
pub(super) const NOT_UTF8: &str = "the body is not UTF-8";

impl ScanError {
    /// `what` went wrong at byte `pos` of `bytes`.
    pub(super) fn at(bytes: &[u8], pos: usize, what: &'static str) -> Self {
        let before = &bytes[..pos.min(bytes.len())];
        let line_start = before
            .iter()
            .rposition(|&byte| byte == b'\n')
            .map_or(0, |newline| newline + 1);
        ScanError {
            what,
            line: before.iter().filter(|&&byte| byte == b'\n').count() + 1,
            column: before.len() - line_start + 1,
        }
    }
}

/// Scans `bytes`, which must be one JSON object in UTF-8, calling `field` for each top-level
/// field in order.
pub(super) fn object_fields(
    bytes: &[u8],
    mut field: impl FnMut(FieldSpan),
) -> Result<(), ScanError> {
    let mut scan = Scanner { bytes, pos: 0 };
    scan.skip_whitespace();
    scan.expect(b'{', "expected `{` (the body must be a JSON object)")?;
    scan.skip_whitespace();
    if scan.peek() == Some(b'}') {
        scan.pos += 1;
    } else {
        let mut nesting = Vec::new();
        loop {
            scan.skip_whitespace();
            let (key, key_escaped) = scan.key()?;
            scan.skip_whitespace();
            let start = scan.pos;
            scan.value(&mut nesting)?;
            field(FieldSpan {
                key,
                key_escaped,
                value: (start, scan.pos),
            });
            scan.skip_whitespace();
            match scan.peek() {
                Some(b',') => scan.pos += 1,
                Some(b'}') => {
                    scan.pos += 1;
                    break;
                }
                Some(_) => return Err(scan.error("expected `,` or `}`")),
                None => return Err(scan.error("EOF while parsing an object")),
            }
        }
    }
    scan.skip_whitespace();
    if scan.pos != scan.bytes.len() {
        return Err(scan.error("trailing characters"));
    }
    Ok(())
}

/// Where the first item of `bytes`, one JSON array, lies (its text without the whitespace
/// around it); `None` when `bytes` is not an array, is empty, or its first item is not valid
/// JSON. Only the first item is read.
pub(super) fn first_item(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut scan = Scanner { bytes, pos: 0 };
    scan.skip_whitespace();
    scan.expect(b'[', "").ok()?;
    scan.skip_whitespace();
    if scan.peek() == Some(b']') {
        return None;
    }
    let start = scan.pos;
    scan.value(&mut Vec::new()).ok()?;
    Some((start, scan.pos))
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

/// What encloses the value being scanned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Array,
    Object,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), ScanError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    /// An object key and its colon, whitespace before the colon included; returns the key's
    /// span inside the quotes and whether it has escapes.
    fn key(&mut self) -> Result<((usize, usize), bool), ScanError> {
        if self.peek() != Some(b'"') {
            return Err(self.error(match self.peek() {
                Some(_) => "key must be a string",
                None => "EOF while parsing an object",
            }));
        }
        let start = self.pos + 1;
        let escaped = self.string()?;
        let end = self.pos - 1;
        self.skip_whitespace();
        self.expect(b':', "expected `:`")?;
        Ok(((start, end), escaped))
    }

    /// One value, containers included, without recursion: `nesting` holds what is open.
    fn value(&mut self, nesting: &mut Vec<Open>) -> Result<(), ScanError> {
        nesting.clear();
        loop {
            // A value starts here.
            self.skip_whitespace();
            match self.peek() {
                Some(b'"') => {
                    self.string()?;
                }
                Some(b'{') => {
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                    } else {
                        nesting.push(Open::Object);
                        self.key()?;
                        continue;
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                    } else {
                        nesting.push(Open::Array);
                        continue;
                    }
                }
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(_) => return Err(self.error("expected value")),
                None => return Err(self.error("EOF while parsing a value")),
            }
            // A value ended: close what it ends, or move to the next element.
            loop {
                let Some(&open) = nesting.last() else {
                    return Ok(());
                };
                self.skip_whitespace();
                match (self.peek(), open) {
                    (Some(b','), Open::Array) => {
                        self.pos += 1;
                        break;
                    }
                    (Some(b','), Open::Object) => {
                        self.pos += 1;
                        self.skip_whitespace();
                        self.key()?;
                        break;
                    }
                    (Some(b']'), Open::Array) | (Some(b'}'), Open::Object) => {
                        self.pos += 1;
                        nesting.pop();
                    }
                    (Some(_), Open::Array) => return Err(self.error("expected `,` or `]`")),
                    (Some(_), Open::Object) => return Err(self.error("expected `,` or `}`")),
                    (None, Open::Array) => return Err(self.error("EOF while parsing a list")),
                    (None, Open::Object) => return Err(self.error("EOF while parsing an object")),
                }
            }
        }
    }

    /// A string from its opening quote to just past its closing one; returns whether it had
    /// escapes. Most strings in a request are short and plain (keys, schema words), so the
    /// plain case is inlined here and everything else is left to [`Self::string_rest`]: the
    /// call's set-up would otherwise cost more than scanning a short string.
    #[inline(always)]
    fn string(&mut self) -> Result<bool, ScanError> {
        self.pos += 1;
        self.skip_ascii();
        if self.peek() == Some(b'"') {
            self.pos += 1;
            return Ok(false);
        }
        self.string_rest(false)
    }

    /// The rest of a string from a byte the ASCII fast path stopped at.
    #[inline(never)]
    fn string_rest(&mut self, mut escaped: bool) -> Result<bool, ScanError> {
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    escaped = true;
                    self.escape()?;
                }
                Some(byte) if byte >= 0x80 => self.skip_utf8()?,
                Some(_) => {
                    return Err(self.error(
                        "control character (\\u0000-\\u001F) found while parsing a string",
                    ));
                }
                None => return Err(self.error("EOF while parsing a string")),
            }
            self.skip_ascii();
        }
    }

    /// Moves to the next `"`, `\`, control character or non-ASCII byte, or to the end: 16
    /// bytes at a time, then byte by byte for the last few.
    #[inline(always)]
    fn skip_ascii(&mut self) {
        while let Some(chunk) = self
            .bytes
            .get(self.pos..self.pos + 16)
            .and_then(|chunk| <&[u8; 16]>::try_from(chunk).ok())
        {
            let flags = stop_flags(chunk);
            if flags != 0 {
                self.pos += (flags.trailing_zeros() / 8) as usize;
                return;
            }
            self.pos += 16;
        }
        while let Some(&byte) = self.bytes.get(self.pos) {
            if stops_ascii(byte) {
                return;
            }
            self.pos += 1;
        }
    }

    /// From a non-ASCII byte to the next `"` or `\`: the run must be valid UTF-8 without
    /// control characters. (A character cut by a quote is invalid, as it should be.)
    fn skip_utf8(&mut self) -> Result<(), ScanError> {
        let rest = &self.bytes[self.pos..];
        let run = &rest[..memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len())];
        if let Err(error) = std::str::from_utf8(run) {
            self.pos += error.valid_up_to();
            return Err(self.error(NOT_UTF8));
        }
        if let Some(control) = run.iter().position(|&byte| byte < 0x20) {
            self.pos += control;
            return Err(
                self.error("control character (\\u0000-\\u001F) found while parsing a string")
            );
        }
        self.pos += run.len();
        Ok(())
    }

    /// A backslash escape: one of `"\/bfnrt`, or `u` and four hex digits.
    fn escape(&mut self) -> Result<(), ScanError> {
        self.pos += 1;
        match self.peek() {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.pos += 1;
                Ok(())
            }
            Some(b'u') => {
                self.pos += 1;
                for _ in 0..4 {
                    match self.peek() {
                        Some(byte) if byte.is_ascii_hexdigit() => self.pos += 1,
                        Some(_) => return Err(self.error("invalid escape")),
                        None => return Err(self.error("EOF while parsing a string")),
                    }
                }
                Ok(())
            }
            Some(_) => Err(self.error("invalid escape")),
            None => Err(self.error("EOF while parsing a string")),
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Result<(), ScanError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.error("invalid number"));
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !self.some_digits() {
                return Err(self.error("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !self.some_digits() {
                return Err(self.error("invalid number"));
            }
        }
        Ok(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    fn some_digits(&mut self) -> bool {
        let start = self.pos;
        self.digits();
        self.pos > start
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<(), ScanError> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error("expected value"))
        }
    }

    /// An error at the current position.
    fn error(&self, what: &'static str) -> ScanError {
        ScanError::at(self.bytes, self.pos, what)
    }
}

/// A byte the ASCII fast path stops at: a quote, a backslash, a control character, or a
/// byte of a multi-byte UTF-8 character. One signed compare covers the last two.
fn stops_ascii(byte: u8) -> bool {
    // `|`, not `||`: no branches, so a map over a chunk becomes vector compares.
    (byte == b'"') | (byte == b'\\') | ((byte as i8) < 0x20)
}

/// Byte `i` (little-endian) is `0xff` when `chunk[i]` stops the fast path, else 0.
/// Branch-free over a fixed width, so the compiler turns it into a few vector compares.
fn stop_flags(chunk: &[u8; 16]) -> u128 {
    let mut flags = [0u8; 16];
    for (flag, &byte) in flags.iter_mut().zip(chunk) {
        *flag = 0u8.wrapping_sub(u8::from(stops_ascii(byte)));
    }
    u128::from_le_bytes(flags)
}
