//! Argument parsing that forgives the small slips models make: numbers and booleans sent as
//! strings, arguments sent as a JSON-encoded string, and the field names of other agents
//! (`file_path`, `filePath`, `oldString`, …, declared as serde aliases on each tool's struct).
//! Text that is not JSON at all (a reply cut off mid-call) is refused as such, before any tool
//! sees it, so the model learns what to fix instead of hearing about a missing field.

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde_json::Value;

use crate::error::ToolError;

/// A tool call whose argument text is not JSON (a reply cut off mid-call, usually). Its words
/// go back to the model, so they say what to fix.
#[derive(Debug, thiserror::Error)]
#[error("the arguments were not valid JSON: {0}")]
pub struct NotJson(#[source] serde_json::Error);

/// Reads a tool call's raw argument text as JSON. Blank text is an empty object (models send it
/// for tools without parameters); anything else must parse.
pub fn parse_call_arguments(text: &str) -> Result<Value, NotJson> {
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(text).map_err(NotJson)
}

/// Parses a tool's arguments.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, ToolError> {
    let arguments = match arguments {
        // Some models double-encode: `"{\"path\": \"a\"}"`.
        Value::String(text) => serde_json::from_str::<Value>(&text)
            .map_err(|error| ToolError::invalid(tool, NotJson(error).to_string()))?,
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other,
    };
    serde_json::from_value(arguments).map_err(|error| ToolError::invalid(tool, error.to_string()))
}

/// An optional non-negative integer, also accepted as a string (`"20"`) or an integral float.
pub(crate) fn opt_u64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    match Option::<Value>::deserialize(deserializer)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => {
            if let Some(value) = number.as_u64() {
                Ok(Some(value))
            } else {
                match number.as_f64() {
                    Some(value) if value >= 0.0 && value.fract() == 0.0 && value < 1e15 => {
                        Ok(Some(value as u64))
                    }
                    _ => Err(D::Error::custom(format!(
                        "expected a non-negative integer, got {number}"
                    ))),
                }
            }
        }
        Some(Value::String(text)) => text.trim().parse::<u64>().map(Some).map_err(|_| {
            D::Error::custom(format!("expected a non-negative integer, got \"{text}\""))
        }),
        Some(other) => Err(D::Error::custom(format!(
            "expected a non-negative integer, got {other}"
        ))),
    }
}

/// An optional boolean, also accepted as `"true"` / `"false"`.
pub(crate) fn opt_bool<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<bool>, D::Error> {
    match Option::<Value>::deserialize(deserializer)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(value)) => Ok(Some(value)),
        Some(Value::String(text)) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Ok(Some(true)),
            "false" | "no" | "0" | "" => Ok(Some(false)),
            _ => Err(D::Error::custom(format!(
                "expected true or false, got \"{text}\""
            ))),
        },
        Some(other) => Err(D::Error::custom(format!(
            "expected true or false, got {other}"
        ))),
    }
}

#[cfg(test)]
mod tests;
