//! `read`: a file as numbered lines, or a directory's entries.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::args;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::text;
use crate::tool::{Action, BuiltinSpec, Plan, Prepared, Proposal, ToolKind, ToolOutput};

pub(crate) const NAME: &str = "read";

/// Files larger than this are not counted to the end for the "of N lines" note.
const COUNT_LIMIT: u64 = 32 * 1024 * 1024;

pub(crate) fn spec() -> BuiltinSpec {
    BuiltinSpec {
        name: NAME,
        description: "Read a text file from the project as numbered lines (`     12\\tcode`), or list a directory. \
            Shows up to 2000 lines from `offset` (1-based); long lines are cut and output stops near 50 KB, \
            with a note saying which offset to continue from. Binary files are refused. \
            The line numbers are for orientation only: never copy them into old_string.",
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File or directory, relative to the project folder"},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based; default 1)"},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show (default and maximum 2000)"}
            },
            "required": ["path"],
            "additionalProperties": false
        }),
        kind: ToolKind::Read,
    }
}

#[derive(Debug, Deserialize)]
struct ReadArgs {
    #[serde(alias = "file_path", alias = "filePath")]
    path: String,
    #[serde(default, deserialize_with = "args::opt_u64")]
    offset: Option<u64>,
    #[serde(default, deserialize_with = "args::opt_u64")]
    limit: Option<u64>,
}

#[derive(Debug)]
pub(crate) struct ReadPlan {
    path: PathBuf,
    shown: String,
    offset: u64,
    limit: u64,
}

pub(crate) fn prepare(context: &ToolContext, arguments: Value) -> Result<Prepared, ToolError> {
    let arguments: ReadArgs = args::parse(NAME, arguments)?;
    let path = context.workspace.resolve(&arguments.path)?;
    let shown = context.workspace.display(&path);
    let offset = arguments.offset.unwrap_or(1).max(1);
    let limit = arguments
        .limit
        .unwrap_or(context.limits.read_lines)
        .clamp(1, context.limits.read_lines);
    Ok(Prepared {
        tool: NAME.to_owned(),
        kind: ToolKind::Read,
        proposal: Proposal {
            summary: format!("Read {shown}"),
            diff: None,
            whole_file: false,
            command: None,
            path: Some(context.workspace.relative(&path)),
        },
        plan: Plan {
            action: Action::Read(ReadPlan {
                path,
                shown,
                offset,
                limit,
            }),
        },
    })
}

pub(crate) fn apply(context: &ToolContext, plan: &ReadPlan) -> Result<ToolOutput, ToolError> {
    let meta = std::fs::metadata(&plan.path).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => ToolError::NotFound {
            path: plan.shown.clone(),
        },
        _ => ToolError::io(&plan.shown, error),
    })?;
    if meta.is_dir() {
        return list_directory(context, plan);
    }
    if !meta.is_file() {
        return Err(ToolError::NotRegularFile {
            path: plan.shown.clone(),
        });
    }
    read_file(context, plan, meta.len())
}

fn read_file(context: &ToolContext, plan: &ReadPlan, size: u64) -> Result<ToolOutput, ToolError> {
    let io_error = |error| ToolError::io(&plan.shown, error);
    let mut file = context.files.open(&plan.path).map_err(io_error)?;
    let mut sample = Vec::with_capacity(text::SNIFF_BYTES);
    (&mut file)
        .take(text::SNIFF_BYTES as u64)
        .read_to_end(&mut sample)
        .map_err(io_error)?;
    if let Some(reason) = text::binary_reason(&sample) {
        return Err(ToolError::Binary {
            path: plan.shown.clone(),
            size,
            reason,
        });
    }
    if sample.is_empty() {
        return Ok(ToolOutput::text(format!("{} is empty.", plan.shown)));
    }

    let limits = &context.limits;
    let mut reader = BufReader::new(std::io::Cursor::new(sample).chain(file));
    let mut buffer = Vec::new();
    let mut out = String::new();
    let mut number = 0u64;
    let mut last_shown = 0u64;
    let mut stopped_by_size = false;
    let mut counted_to_end = true;
    loop {
        buffer.clear();
        if reader.read_until(b'\n', &mut buffer).map_err(io_error)? == 0 {
            break;
        }
        number += 1;
        let showing = number >= plan.offset
            && number < plan.offset.saturating_add(plan.limit)
            && !stopped_by_size;
        if !showing {
            if number >= plan.offset && size > COUNT_LIMIT {
                // Past the window of a huge file: do not read it all just to count.
                counted_to_end = false;
                break;
            }
            continue;
        }
        let line = String::from_utf8_lossy(&buffer);
        let line = line.trim_end_matches('\n').trim_end_matches('\r');
        let line = text::numbered(number, &text::cut_line(line, limits.line_chars));
        if out.len() + line.len() + 1 > limits.read_bytes && last_shown > 0 {
            stopped_by_size = true;
            continue;
        }
        out.push_str(&line);
        out.push('\n');
        last_shown = number;
    }

    if last_shown == 0 {
        return Err(ToolError::OffsetPastEnd {
            path: plan.shown.clone(),
            offset: plan.offset,
            lines: number,
        });
    }
    if last_shown < number || !counted_to_end {
        let total = if counted_to_end {
            format!("{number}")
        } else {
            format!("more than {number}")
        };
        let why = if stopped_by_size {
            format!(
                " (output is capped at {})",
                text::size(limits.read_bytes as u64)
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "\n(Showing lines {}-{last_shown} of {total}{why}. Use offset={} to read on.)\n",
            plan.offset,
            last_shown + 1
        ));
    }
    Ok(ToolOutput::text(out))
}

fn list_directory(context: &ToolContext, plan: &ReadPlan) -> Result<ToolOutput, ToolError> {
    let io_error = |error| ToolError::io(&plan.shown, error);
    let mut entries: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(&plan.path).map_err(io_error)? {
        let entry = entry.map_err(io_error)?;
        let mut name = entry.file_name().to_string_lossy().into_owned();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => name.push('/'),
            Ok(kind) if kind.is_symlink() => name.push('@'),
            _ => {}
        }
        entries.push(name);
    }
    entries.sort();
    let total = entries.len();
    let limit = context.limits.list_entries;
    let mut out = format!(
        "{} is a directory with {total} entries (`/` marks directories, `@` symbolic links):\n",
        plan.shown
    );
    for name in entries.iter().take(limit) {
        out.push_str(name);
        out.push('\n');
    }
    if total > limit {
        out.push_str(&format!(
            "… {} more entries not shown; use glob to search.\n",
            total - limit
        ));
    }
    Ok(ToolOutput::text(out))
}
