//! The one error type of the tools. Its `Display` text is written for the model: each message
//! says what went wrong and what to do instead, because it goes back as the tool result.

use std::io;

use crate::workspace::PathError;

/// Why a tool call failed. The agent sends `to_string()` to the model as an error result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The model asked for a tool that is not on offer.
    #[error("unknown tool `{name}`; the available tools are: {available}")]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The names on offer, comma-separated.
        available: String,
    },
    /// The arguments do not fit the tool's schema.
    #[error("invalid arguments for `{tool}`: {message}")]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// What is wrong.
        message: String,
    },
    /// The path is outside the project folder or protected.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The path does not exist.
    #[error("{path} does not exist")]
    NotFound {
        /// The path, relative to the project folder.
        path: String,
    },
    /// A file was expected.
    #[error("{path} is a directory, not a file")]
    IsDirectory {
        /// The path, relative to the project folder.
        path: String,
    },
    /// Neither a file nor a directory (a device, a socket, a FIFO).
    #[error("{path} is not a regular file")]
    NotRegularFile {
        /// The path, relative to the project folder.
        path: String,
    },
    /// The file is not text.
    #[error(
        "{path} looks like a binary file ({size} bytes, {reason}); the tools only show and edit text. Use `bash` (for example `file` or `xxd | head`) to inspect it"
    )]
    Binary {
        /// The path, relative to the project folder.
        path: String,
        /// Its size in bytes.
        size: u64,
        /// What gave it away.
        reason: &'static str,
    },
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The path, relative to the project folder.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// `read` was asked to start past the end of the file.
    #[error("offset {offset} is past the end of {path}, which has {lines} lines")]
    OffsetPastEnd {
        /// The path, relative to the project folder.
        path: String,
        /// The requested first line.
        offset: u64,
        /// The file's line count.
        lines: u64,
    },
    /// `edit` could not find `old_string`.
    #[error("old_string was not found in {path}.{closest}")]
    EditNotFound {
        /// The path, relative to the project folder.
        path: String,
        /// The closest region with line numbers, or advice; starts with a space or newline.
        closest: String,
    },
    /// `edit` found `old_string` in more than one place.
    #[error(
        "old_string matches {count} places in {path} (at lines {lines}). Add surrounding lines to old_string so it matches exactly one place, or set replace_all to change every occurrence"
    )]
    EditAmbiguous {
        /// The path, relative to the project folder.
        path: String,
        /// How many places.
        count: usize,
        /// Their first lines, comma-separated.
        lines: String,
    },
    /// The text an approved edit was to replace is gone from the current file.
    #[error(
        "the text to replace is no longer in {path}: the file changed while the edit waited for approval. Read the file again and redo the edit"
    )]
    EditVanished {
        /// The path, relative to the project folder.
        path: String,
    },
    /// The text an approved edit was to replace now appears more than once.
    #[error(
        "the text to replace now appears {count} times in {path} (at lines {lines}): the file changed while the edit waited for approval. Read the file again and redo the edit"
    )]
    EditNowAmbiguous {
        /// The path, relative to the project folder.
        path: String,
        /// How many places.
        count: usize,
        /// Their first lines, comma-separated.
        lines: String,
    },
    /// An edit or write cannot be carried out as proposed.
    #[error("cannot change {path}: {reason}")]
    Refused {
        /// The path, relative to the project folder.
        path: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// The user cancelled while the tool ran; `output` is what it produced until then.
    #[error("cancelled by the user")]
    Cancelled {
        /// Partial output (may be empty).
        output: String,
    },
    /// A background process id that this session does not know.
    #[error("no background process `{id}`; known: {known}")]
    UnknownProcess {
        /// The id asked for.
        id: String,
        /// The ids known, comma-separated, or "none".
        known: String,
    },
    /// Too many background processes are running.
    #[error(
        "{running} background processes are already running (the limit); stop one with the `process` tool first"
    )]
    TooManyProcesses {
        /// How many run.
        running: usize,
    },
    /// A command could not be started.
    #[error("could not start the command: {source}")]
    Spawn {
        /// Why.
        source: io::Error,
    },
    /// A bug or a panic inside a tool; the session goes on.
    #[error("internal error in the tool: {0}")]
    Internal(String),
    /// A tool from another source (an MCP server, a custom tool) could not run; the text,
    /// written for the model, says why.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// The arguments given to `tool` do not fit its schema: `message` says how.
    pub fn invalid(tool: &str, message: impl Into<String>) -> Self {
        Self::InvalidArguments {
            tool: tool.to_owned(),
            message: message.into(),
        }
    }

    pub(crate) fn io(path: impl Into<String>, source: io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn refused(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Refused {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
