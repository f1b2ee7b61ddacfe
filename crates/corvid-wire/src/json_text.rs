//! JSON text written by hand on the hot encoders' paths. serde_json escapes a string one byte
//! at a time through a table; most of a request is long runs of plain text, so this checks 16
//! bytes at a time and copies the runs whole. The output is byte for byte serde_json's.

/// Writes `text` as a JSON string, escaped exactly as `serde_json` escapes it: `"` and `\`,
/// the short escapes `\b \t \n \f \r`, other control characters as `\u00xx`; nothing else.
pub(crate) fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    while let Some(at) = next_escape(bytes, start) {
        out.extend_from_slice(&bytes[start..at]);
        write_escape(out, bytes[at]);
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Writes `value` in decimal, as serde_json writes an unsigned integer (no `core::fmt`).
pub(crate) fn write_u64(out: &mut Vec<u8>, value: u64) {
    // The formatter serde_json itself writes integers with.
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Writes `"key":` (a key with no characters to escape, as every key written here is).
pub(crate) fn write_key(out: &mut Vec<u8>, key: &str) {
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
}

/// The position of the next byte at or after `from` that must be escaped.
fn next_escape(bytes: &[u8], mut from: usize) -> Option<usize> {
    while let Some(chunk) = bytes
        .get(from..from + 16)
        .and_then(|chunk| <&[u8; 16]>::try_from(chunk).ok())
    {
        let flags = escape_flags(chunk);
        if flags != 0 {
            return Some(from + (flags.trailing_zeros() / 8) as usize);
        }
        from += 16;
    }
    bytes[from..]
        .iter()
        .position(|&byte| must_escape(byte))
        .map(|offset| from + offset)
}

/// Branch-free, so a map over a chunk becomes a few vector compares.
fn must_escape(byte: u8) -> bool {
    (byte == b'"') | (byte == b'\\') | (byte < 0x20)
}

/// Byte `i` (little-endian) is `0xff` when `chunk[i]` must be escaped, else 0.
fn escape_flags(chunk: &[u8; 16]) -> u128 {
    let mut flags = [0u8; 16];
    for (flag, &byte) in flags.iter_mut().zip(chunk) {
        *flag = 0u8.wrapping_sub(u8::from(must_escape(byte)));
    }
    u128::from_le_bytes(flags)
}

fn write_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        b'\t' => b't',
        b'\n' => b'n',
        0x0c => b'f',
        b'\r' => b'r',
        _ => {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{write_str, write_u64};

    fn written(text: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, text);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn numbers_at_the_edges_are_written_as_serde_json_writes_them() {
        for value in [0, 9, 10, 99, 100, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            write_u64(&mut out, value);
            assert_eq!(out, serde_json::to_vec(&value).unwrap());
        }
    }

    #[test]
    fn escapes_as_serde_json_does() {
        let every_ascii: String = (0u8..0x80).map(char::from).collect();
        for text in [
            "",
            "plain",
            "a\"b\\c",
            "line\nnext\ttab\r\u{8}\u{c}\u{1}\u{1f}\u{7f}",
            "é 😀 \u{2028}",
            &every_ascii,
            &"x".repeat(40),
            &format!("{}\"{}\n", "y".repeat(17), "z".repeat(31)),
        ] {
            assert_eq!(
                written(text),
                serde_json::to_string(text).unwrap(),
                "{text:?}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn any_number_is_written_as_serde_json_writes_it(value in any::<u64>()) {
            let mut out = Vec::new();
            write_u64(&mut out, value);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&value).unwrap());
        }

        #[test]
        fn any_string_is_written_as_serde_json_writes_it(text in any::<String>()) {
            prop_assert_eq!(written(&text), serde_json::to_string(&text).unwrap());
        }

        #[test]
        fn long_runs_with_the_odd_escape(
            pieces in prop::collection::vec(
                prop_oneof![
                    "[a-z ]{0,40}".prop_map(String::from),
                    prop::sample::select(vec!["\"", "\\", "\n", "\u{1}", "é", "😀"]).prop_map(String::from),
                ],
                0..12,
            ),
        ) {
            let text = pieces.concat();
            prop_assert_eq!(written(&text), serde_json::to_string(&text).unwrap());
        }
    }
}
