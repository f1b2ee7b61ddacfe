//! Typed reads of `serde_json` values with the JSON path of a bad field in the error.

use serde_json::Value;

use crate::model::DecodeError;

/// `value` as a string, or an error naming `path`.
pub(crate) fn string<'a>(value: &'a Value, path: &str) -> Result<&'a str, DecodeError> {
    value
        .as_str()
        .ok_or_else(|| DecodeError::field(path, "must be a string"))
}

/// `value` as a string when present (`null` counts as absent).
pub(crate) fn optional_string<'a>(
    value: &'a Value,
    path: &str,
) -> Result<Option<&'a str>, DecodeError> {
    match value {
        Value::Null => Ok(None),
        other => string(other, path).map(Some),
    }
}

/// `value` as a number when present.
pub(crate) fn optional_f64(value: &Value, path: &str) -> Result<Option<f64>, DecodeError> {
    match value {
        Value::Null => Ok(None),
        other => other
            .as_f64()
            .map(Some)
            .ok_or_else(|| DecodeError::field(path, "must be a number")),
    }
}

/// `value` as a boolean when present.
pub(crate) fn optional_bool(value: &Value, path: &str) -> Result<Option<bool>, DecodeError> {
    match value {
        Value::Null => Ok(None),
        other => other
            .as_bool()
            .map(Some)
            .ok_or_else(|| DecodeError::field(path, "must be a boolean")),
    }
}

/// `value` as a token count when present (larger counts saturate).
pub(crate) fn optional_u32(value: &Value, path: &str) -> Result<Option<u32>, DecodeError> {
    match value {
        Value::Null => Ok(None),
        other => other
            .as_u64()
            .map(|count| Some(u32::try_from(count).unwrap_or(u32::MAX)))
            .ok_or_else(|| DecodeError::field(path, "must be a non-negative integer")),
    }
}

/// `value` as an array when present (`null` counts as empty).
pub(crate) fn optional_array<'a>(value: &'a Value, path: &str) -> Result<&'a [Value], DecodeError> {
    match value {
        Value::Null => Ok(&[]),
        Value::Array(items) => Ok(items),
        _ => Err(DecodeError::field(path, "must be an array")),
    }
}

/// Unix seconds from a number that may be written as a float.
pub(crate) fn timestamp(value: &Value) -> i64 {
    value
        .as_i64()
        .or_else(|| value.as_f64().map(|seconds| seconds as i64))
        .unwrap_or(0)
}
