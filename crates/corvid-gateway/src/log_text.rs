//! Client- and upstream-supplied text in log lines: the one wrapper every such value goes
//! through, so a newline or an escape sequence in it cannot forge a log line or repaint the
//! terminal.

use std::fmt;

/// Displays its text with control characters escaped (`\n`, `\r`, `\t`, `\u{1b}`…); the
/// rest, non-ASCII included, as it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clean<'a>(pub(crate) &'a str);

impl fmt::Display for Clean<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(char::is_control) {
            out.write_str(&rest[..at])?;
            let mut chars = rest[at..].chars();
            if let Some(control) = chars.next() {
                // `escape_debug` writes `\n`, `\t`, `\r` and `\u{..}` for the rest.
                write!(out, "{}", control.escape_debug())?;
            }
            rest = chars.as_str();
        }
        out.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::Clean;

    #[test]
    fn control_characters_are_escaped_and_the_rest_is_kept() {
        assert_eq!(Clean("grok-4").to_string(), "grok-4");
        assert_eq!(
            Clean("a\nINFO forged\r\t\u{1b}[31m\0\u{7f}\u{85}é").to_string(),
            "a\\nINFO forged\\r\\t\\u{1b}[31m\\0\\u{7f}\\u{85}é"
        );
    }
}
