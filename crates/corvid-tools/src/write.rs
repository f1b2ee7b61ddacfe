//! `write`: a file's whole content, created or replaced; plus the file helpers `edit` shares.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::args;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::text;
use crate::tool::{
    Action, BuiltinSpec, Plan, Prepared, Proposal, ToolDetail, ToolKind, ToolOutput,
};

pub(crate) const NAME: &str = "write";

pub(crate) fn spec() -> BuiltinSpec {
    BuiltinSpec {
        name: NAME,
        description: "Create a file, or replace a file's whole content. Parent folders are created. \
            An existing file keeps its line endings (CRLF) and byte order mark. \
            Prefer `edit` for changes to part of an existing file. The user may be asked to approve the diff.",
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the project folder"},
                "content": {"type": "string", "description": "The complete new content of the file"}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        }),
        kind: ToolKind::Edit,
    }
}

#[derive(Debug, Deserialize)]
struct WriteArgs {
    #[serde(alias = "file_path", alias = "filePath")]
    path: String,
    content: String,
}

#[derive(Debug)]
pub(crate) struct WritePlan {
    input: String,
    pub(crate) path: PathBuf,
    shown: String,
    content: String,
    /// The bytes the diff was computed against; `None` when the file did not exist.
    previous: Option<Vec<u8>>,
}

pub(crate) fn prepare(context: &ToolContext, arguments: Value) -> Result<Prepared, ToolError> {
    let arguments: WriteArgs = args::parse(NAME, arguments)?;
    let path = context.workspace.resolve_for_write(&arguments.path)?;
    let shown = context.workspace.display(&path);
    let previous = read_current(context, &path, &shown)?;
    let previous_text = previous
        .as_deref()
        .and_then(|bytes| std::str::from_utf8(bytes).ok());
    let content = match previous_text {
        Some(old) => fit_to(old, &arguments.content),
        None => arguments.content,
    };
    let (summary, diff) = match (&previous, previous_text) {
        (None, _) => (
            format!(
                "Create {shown} ({})",
                text::lines(text::line_count(&content))
            ),
            text::unified_diff(None, &content, &shown),
        ),
        // Nothing to approve and nothing to write: the model is told at once, so it does not
        // ask the user to approve an empty diff.
        (Some(_), Some(old)) if old == content => {
            return Err(ToolError::refused(
                &shown,
                "the file already has exactly this content, so nothing was written and nothing needs approval. Go on with the next step",
            ));
        }
        (Some(_), Some(old)) => {
            let diff = text::unified_diff(Some(old), &content, &shown);
            let (added, removed) = text::diff_stats(&diff);
            (
                format!("Overwrite {shown} (+{added} -{removed} lines)"),
                diff,
            )
        }
        (Some(bytes), None) => (
            format!("Overwrite {shown}"),
            format!(
                "Binary file {shown} ({} bytes) replaced by text ({} lines)\n",
                bytes.len(),
                text::line_count(&content)
            ),
        ),
    };
    Ok(Prepared {
        tool: NAME.to_owned(),
        kind: ToolKind::Edit,
        proposal: Proposal {
            summary,
            diff: Some(text::cap_diff(diff, context.limits.diff_bytes)),
            whole_file: true,
            command: None,
            path: Some(context.workspace.relative(&path)),
        },
        plan: Plan {
            action: Action::Write(WritePlan {
                input: arguments.path,
                path,
                shown,
                content,
                previous,
            }),
        },
    })
}

pub(crate) fn apply(context: &ToolContext, plan: &WritePlan) -> Result<ToolOutput, ToolError> {
    recheck_path(context, &plan.input, &plan.path, &plan.shown)?;
    let current = read_current(context, &plan.path, &plan.shown)?;
    if current != plan.previous {
        let reason = match (&plan.previous, &current) {
            (None, Some(_)) => {
                "the file was created by someone else while the write waited for approval"
            }
            (Some(_), None) => "the file was deleted while the write waited for approval",
            _ => "the file changed while the write waited for approval",
        };
        return Err(ToolError::refused(
            &plan.shown,
            format!("{reason}. Read it again and redo the change"),
        ));
    }
    let old_text = current
        .as_deref()
        .and_then(|bytes| std::str::from_utf8(bytes).ok());
    let diff = text::unified_diff(
        old_text.or(current.as_ref().map(|_| "")),
        &plan.content,
        &plan.shown,
    );
    let created = current.is_none();
    write_file(
        context,
        &plan.path,
        &plan.shown,
        plan.content.as_bytes(),
        created,
    )?;
    let lines = text::lines(text::line_count(&plan.content));
    let verb = if created { "Created" } else { "Wrote" };
    Ok(ToolOutput {
        text: format!("{verb} {} ({lines}).", plan.shown),
        is_error: false,
        detail: Some(ToolDetail::Diff {
            path: PathBuf::from(&plan.shown),
            diff,
        }),
    })
}

/// Gives new content the existing file's byte order mark and CRLF endings when the model left
/// them out.
fn fit_to(old: &str, content: &str) -> String {
    let (bom, old_body) = text::split_bom(old);
    let mut fitted = if text::line_ending(old_body) == "\r\n" && !content.contains("\r\n") {
        text::with_line_ending(content, "\r\n")
    } else {
        content.to_owned()
    };
    if bom && !fitted.starts_with(text::BOM) {
        fitted.insert_str(0, text::BOM);
    }
    fitted
}

/// Resolves the path again right before writing: if a symbolic link appeared on the way while
/// the user reviewed, the write is refused rather than sent elsewhere.
pub(crate) fn recheck_path(
    context: &ToolContext,
    input: &str,
    path: &Path,
    shown: &str,
) -> Result<(), ToolError> {
    let now = context.workspace.resolve_for_write(input)?;
    if now != path {
        return Err(ToolError::refused(
            shown,
            format!(
                "the path now leads to {} (a symbolic link changed while the change waited for approval)",
                context.workspace.display(&now)
            ),
        ));
    }
    Ok(())
}

/// The file's bytes, or `None` when it does not exist.
pub(crate) fn read_current(
    context: &ToolContext,
    path: &Path,
    shown: &str,
) -> Result<Option<Vec<u8>>, ToolError> {
    match std::fs::metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(ToolError::io(shown, error)),
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::IsDirectory {
                path: shown.to_owned(),
            });
        }
        Ok(meta) if !meta.is_file() => {
            return Err(ToolError::NotRegularFile {
                path: shown.to_owned(),
            });
        }
        Ok(_) => {}
    }
    context
        .files
        .read(path)
        .map(Some)
        .map_err(|error| ToolError::io(shown, error))
}

/// Writes a file through the context's [`crate::Files`], creating its parent folders on disk
/// first. A file that appeared while the change waited for approval is refused.
pub(crate) fn write_file(
    context: &ToolContext,
    path: &Path,
    shown: &str,
    content: &[u8],
    create: bool,
) -> Result<(), ToolError> {
    let io_error = |error| ToolError::io(shown, error);
    let parent = path
        .parent()
        .ok_or_else(|| ToolError::refused(shown, "the path has no parent folder"))?;
    std::fs::create_dir_all(parent).map_err(io_error)?;
    context
        .files
        .write(path, content, create)
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::AlreadyExists => ToolError::refused(
                shown,
                "the file was created by someone else while the change waited for approval. Read it and redo the change",
            ),
            _ => io_error(error),
        })
}

/// The disk's write: a new file is created exclusively (it must still be absent); an existing
/// one is replaced atomically (a temporary file beside it, given the old permissions, renamed
/// over it), so a reader never sees half a file.
pub(crate) fn write_to_disk(path: &Path, content: &[u8], create: bool) -> std::io::Result<()> {
    let parent = path
        .parent()
        .ok_or_else(|| std::io::Error::other("the path has no parent folder"))?;
    if create {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)?;
        return file.write_all(content);
    }
    let permissions = std::fs::metadata(path)?.permissions();
    let prefix = format!(
        ".{}.corvid-",
        path.file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let mut temporary = tempfile::Builder::new()
        .prefix(&prefix)
        .tempfile_in(parent)?;
    temporary.write_all(content)?;
    temporary.as_file().set_permissions(permissions)?;
    temporary.persist(path).map_err(|error| error.error)?;
    Ok(())
}
