//! Finding and reading custom tool manifests, and checking a call's arguments against one.

use std::fmt;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::ToolError;
use crate::tool::{ToolKind, ToolSpec};

/// Where custom tools live, relative to the project folder.
pub const TOOLS_DIR: &str = ".corvid/tools";
/// The manifest inside a tool's folder.
pub const MANIFEST: &str = "tool.json";
/// The largest manifest read.
const MAX_MANIFEST_BYTES: u64 = 256 * 1024;
/// The most custom tools offered at once (each one costs context in every request).
const MAX_TOOLS: usize = 64;
/// The most schema violations reported for one call.
const MAX_VIOLATIONS: usize = 5;

/// One usable custom tool.
pub(crate) struct CustomTool {
    pub(crate) name: String,
    description: String,
    parameters: Value,
    pub(crate) command: String,
    /// Its folder (canonical, inside the project): the command runs there.
    pub(crate) folder: PathBuf,
    validator: jsonschema::Validator,
}

impl fmt::Debug for CustomTool {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("CustomTool")
            .field("name", &self.name)
            .field("command", &self.command)
            .field("folder", &self.folder)
            .finish_non_exhaustive()
    }
}

impl CustomTool {
    /// The tool as the model sees it.
    pub(crate) fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            self.name.clone(),
            self.description.clone(),
            self.parameters.clone(),
            ToolKind::Mutating,
        )
        .with_origin("custom")
    }

    /// The arguments as the command will get them, or what is wrong with them. A JSON object
    /// sent as a string (some models double-encode) is read as that object; none at all is `{}`.
    pub(crate) fn check(&self, arguments: Value) -> Result<Value, ToolError> {
        let arguments = match arguments {
            Value::Null => Value::Object(serde_json::Map::new()),
            Value::String(text) => match serde_json::from_str::<Value>(&text) {
                Ok(value @ Value::Object(_)) => value,
                _ => Value::String(text),
            },
            other => other,
        };
        let violations: Vec<String> = self
            .validator
            .iter_errors(&arguments)
            .take(MAX_VIOLATIONS + 1)
            .map(|error| {
                let at = error.instance_path().to_string();
                if at.is_empty() {
                    error.to_string()
                } else {
                    format!("at {at}: {error}")
                }
            })
            .collect();
        if violations.is_empty() {
            return Ok(arguments);
        }
        let mut message = violations
            .iter()
            .take(MAX_VIOLATIONS)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        if violations.len() > MAX_VIOLATIONS {
            message.push_str("; …");
        }
        Err(ToolError::invalid(
            &self.name,
            format!("{message}. The arguments must match the tool's parameters schema."),
        ))
    }
}

/// The project's custom tools, sorted by name, and a notice for each folder that could not be
/// used. No `.corvid/tools` folder means no tools and nothing to say.
pub(crate) fn discover(root: &Path) -> (Vec<CustomTool>, Vec<String>) {
    let folder = root.join(TOOLS_DIR);
    let Ok(entries) = fs::read_dir(&folder) else {
        return (Vec::new(), Vec::new());
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_dir())
        .filter_map(|entry| entry.file_name().into_string().ok())
        // Hidden folders are the user's own business (a `.git`, an editor's scratch).
        .filter(|name| !name.starts_with('.'))
        .collect();
    names.sort_unstable();
    let mut tools = Vec::new();
    let mut notices = Vec::new();
    for name in names {
        let shown = format!("{TOOLS_DIR}/{name}/{MANIFEST}");
        match load(root, &folder.join(&name), &name) {
            Ok(tool) if tools.len() < MAX_TOOLS => tools.push(tool),
            Ok(_) => notices.push(format!(
                "skipped the custom tool {shown}: only {MAX_TOOLS} custom tools are offered at once"
            )),
            Err(reason) => notices.push(format!("skipped the custom tool {shown}: {reason}")),
        }
    }
    (tools, notices)
}

/// Why a custom tool's folder cannot be used; said in the notice that skips it.
#[derive(Debug, thiserror::Error)]
enum ManifestError {
    #[error("its folder cannot be opened: {0}")]
    Folder(#[source] std::io::Error),
    #[error("its folder leads outside the project")]
    OutsideProject,
    #[error("there is no {MANIFEST}")]
    Missing,
    #[error("it cannot be read: {0}")]
    Unreadable(#[source] std::io::Error),
    #[error("it is larger than {} KiB", MAX_MANIFEST_BYTES / 1024)]
    TooLarge,
    #[error("it is not valid JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error("it must be a JSON object")]
    NotAnObject,
    #[error("`{key}` is empty")]
    Empty { key: &'static str },
    #[error("`{key}` must be a string")]
    NotAString { key: &'static str },
    #[error("`{key}` is missing")]
    MissingKey { key: &'static str },
    #[error("`name` is `{given}` but the folder is `{folder}`: they must be the same")]
    NameMismatch { given: String, folder: String },
    #[error(
        "`parameters` must be an object schema (`\"type\": \"object\"`): the arguments arrive as one JSON object"
    )]
    NotAnObjectSchema,
    #[error("`parameters` must be a JSON Schema object")]
    SchemaNotAnObject,
    #[error("`parameters` is not a valid JSON Schema: {0}")]
    InvalidSchema(#[source] jsonschema::ValidationError<'static>),
}

/// One tool's folder, checked and compiled; the reason it cannot be used otherwise.
fn load(root: &Path, folder: &Path, name: &str) -> Result<CustomTool, ManifestError> {
    let folder = folder.canonicalize().map_err(ManifestError::Folder)?;
    if !folder.starts_with(root) {
        return Err(ManifestError::OutsideProject);
    }
    let path = folder.join(MANIFEST);
    let mut text = String::new();
    fs::File::open(&path)
        .and_then(|file| file.take(MAX_MANIFEST_BYTES + 1).read_to_string(&mut text))
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => ManifestError::Missing,
            _ => ManifestError::Unreadable(error),
        })?;
    if text.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(ManifestError::TooLarge);
    }
    let manifest: Value = serde_json::from_str(&text).map_err(ManifestError::NotJson)?;
    let Value::Object(manifest) = manifest else {
        return Err(ManifestError::NotAnObject);
    };
    let text_field = |key: &'static str| match manifest.get(key) {
        Some(Value::String(value)) if !value.trim().is_empty() => Ok(value.clone()),
        Some(Value::String(_)) => Err(ManifestError::Empty { key }),
        Some(_) => Err(ManifestError::NotAString { key }),
        None => Err(ManifestError::MissingKey { key }),
    };
    let given = text_field("name")?;
    if given != name {
        return Err(ManifestError::NameMismatch {
            given,
            folder: name.to_owned(),
        });
    }
    let description = text_field("description")?;
    let command = text_field("command")?;
    let parameters = match manifest.get("parameters") {
        None => serde_json::json!({"type": "object", "properties": {}}),
        Some(schema @ Value::Object(fields)) => {
            if fields.get("type").and_then(Value::as_str) != Some("object") {
                return Err(ManifestError::NotAnObjectSchema);
            }
            schema.clone()
        }
        Some(_) => return Err(ManifestError::SchemaNotAnObject),
    };
    let validator = jsonschema::validator_for(&parameters).map_err(ManifestError::InvalidSchema)?;
    Ok(CustomTool {
        name: name.to_owned(),
        description,
        parameters,
        command,
        folder,
        validator,
    })
}
