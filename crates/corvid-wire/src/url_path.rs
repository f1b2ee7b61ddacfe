//! Text that goes into an upstream URL's path: the one encoder every provider path uses, so a
//! name a client chose (a Gemini model) stays one path segment — never a `..` that climbs, a
//! `?` that starts a query or a `#` that cuts the URL.

use std::borrow::Cow;

/// `text` as one path segment: every byte outside RFC 3986's unreserved set
/// (`A-Z a-z 0-9 - . _ ~`) percent-encoded, so `/`, `?`, `#`, `%`, `:` and control characters
/// cannot change where the request goes. A segment of only dots (`.`, `..`) is encoded too:
/// resolvers treat those as "here" and "up" even when nothing else in them is special.
pub fn segment(text: &str) -> Cow<'_, str> {
    let dots_only = !text.is_empty() && text.bytes().all(|byte| byte == b'.');
    if !dots_only && text.bytes().all(unreserved) {
        return Cow::Borrowed(text);
    }
    let mut encoded = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if unreserved(byte) && !(dots_only && byte == b'.') {
            encoded.push(char::from(byte));
        } else {
            encoded.push('%');
            encoded.push(char::from(HEX[usize::from(byte >> 4)]));
            encoded.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
    }
    Cow::Owned(encoded)
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

fn unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

#[cfg(test)]
mod tests {
    use super::segment;

    #[test]
    fn plain_names_are_borrowed_and_everything_else_is_encoded() {
        assert!(matches!(
            segment("gemini-2.5-flash"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(segment("a/b"), "a%2Fb");
        assert_eq!(segment(".."), "%2E%2E");
        assert_eq!(segment("."), "%2E");
        assert_eq!(segment("x..y"), "x..y");
        assert_eq!(segment("m?key=1#f"), "m%3Fkey%3D1%23f");
        assert_eq!(segment("a:b c%"), "a%3Ab%20c%25");
        assert_eq!(segment("\0\n\u{1b}"), "%00%0A%1B");
        assert_eq!(segment("é"), "%C3%A9");
    }
}
