/// Whether an environment value means "on": `1`, `true`, `yes` or `on`, in any case.
pub fn is_truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// Parses a boolean setting, accepting the truthy words and `0/false/no/off`.
pub(crate) fn parse_bool(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => Err(format!(
            "expected one of 1, true, yes, on, 0, false, no, off; got {other:?}"
        )),
    }
}
