//! Reading fields of a client's JSON with errors that name the field's path
//! (`messages[2].content`). `null` counts as absent everywhere: clients send both.

use serde_json::{Map, Value};

use crate::model::DecodeError;

pub(crate) type Object = Map<String, Value>;

/// The path of `key` inside the object at `at` (`""` for the top level).
pub(crate) fn path(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

/// The field, unless missing or `null`.
pub(crate) fn get<'a>(object: &'a Object, key: &str) -> Option<&'a Value> {
    object.get(key).filter(|value| !value.is_null())
}

/// `value` as an object, or an error naming `at`.
pub(crate) fn as_object<'a>(value: &'a Value, at: &str) -> Result<&'a Object, DecodeError> {
    value
        .as_object()
        .ok_or_else(|| DecodeError::field(at, "must be an object"))
}

/// An optional string field.
pub(crate) fn opt_str<'a>(
    object: &'a Object,
    key: &str,
    at: &str,
) -> Result<Option<&'a str>, DecodeError> {
    get(object, key)
        .map(|value| {
            value
                .as_str()
                .ok_or_else(|| DecodeError::field(path(at, key), "must be a string"))
        })
        .transpose()
}

/// A required string field.
pub(crate) fn req_str<'a>(object: &'a Object, key: &str, at: &str) -> Result<&'a str, DecodeError> {
    opt_str(object, key, at)?.ok_or_else(|| DecodeError::field(path(at, key), "is required"))
}

/// An optional array field.
pub(crate) fn opt_array<'a>(
    object: &'a Object,
    key: &str,
    at: &str,
) -> Result<Option<&'a Vec<Value>>, DecodeError> {
    get(object, key)
        .map(|value| {
            value
                .as_array()
                .ok_or_else(|| DecodeError::field(path(at, key), "must be an array"))
        })
        .transpose()
}

/// An optional boolean field.
pub(crate) fn opt_bool(object: &Object, key: &str, at: &str) -> Result<Option<bool>, DecodeError> {
    get(object, key)
        .map(|value| {
            value
                .as_bool()
                .ok_or_else(|| DecodeError::field(path(at, key), "must be a boolean"))
        })
        .transpose()
}

/// An optional number field.
pub(crate) fn opt_f64(object: &Object, key: &str, at: &str) -> Result<Option<f64>, DecodeError> {
    get(object, key)
        .map(|value| {
            value
                .as_f64()
                .ok_or_else(|| DecodeError::field(path(at, key), "must be a number"))
        })
        .transpose()
}

/// An optional token count.
pub(crate) fn opt_u32(object: &Object, key: &str, at: &str) -> Result<Option<u32>, DecodeError> {
    get(object, key)
        .map(|value| {
            value
                .as_u64()
                .and_then(|count| u32::try_from(count).ok())
                .ok_or_else(|| DecodeError::field(path(at, key), "must be a non-negative integer"))
        })
        .transpose()
}
