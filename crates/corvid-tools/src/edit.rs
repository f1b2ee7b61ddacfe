//! `edit`: replace text in a file, located by the matcher cascade (see `matcher`).
//!
//! Decisions:
//! - An empty `old_string` creates the file when it does not exist, and fills it when it exists
//!   but holds only whitespace. On a file with content it is refused: overwriting a whole file by
//!   accident is the failure users report (use `write` for that).
//! - The file's line endings, byte order mark and final newline are kept.
//! - The plan keeps the exact file text that matched. `apply` finds that text again in the
//!   current file; gone or now ambiguous is refused, with line numbers.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::args;
use crate::error::ToolError;
use crate::matcher::{self, Outcome, RelocateError, Strategy};
use crate::registry::ToolContext;
use crate::text;
use crate::tool::{Action, Plan, Prepared, Proposal, ToolDetail, ToolKind, ToolOutput, ToolSpec};
use crate::write::{read_current, recheck_path, write_file};

pub(crate) const NAME: &str = "edit";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Replace text in a file. old_string must match one place in the file: copy it from `read` output \
            without the line-number prefix, with enough surrounding lines to be unique. Small whitespace and \
            indentation slips are forgiven (new_string is re-indented to fit); an ambiguous match is refused with \
            the candidate line numbers, and a miss shows the closest region. Set replace_all to change every \
            occurrence. An empty old_string creates a file that does not exist yet. \
            The user may be asked to approve the diff.",
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the project folder"},
                "old_string": {"type": "string", "description": "The exact text to replace (empty only to create a new file)"},
                "new_string": {"type": "string", "description": "The text to put in its place"},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string (default false)"}
            },
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": false
        }),
        kind: ToolKind::Edit,
    }
}

#[derive(Debug, Deserialize)]
struct EditArgs {
    #[serde(alias = "file_path", alias = "filePath")]
    path: String,
    #[serde(alias = "oldString", alias = "old_str")]
    old_string: String,
    #[serde(alias = "newString", alias = "new_str")]
    new_string: String,
    #[serde(default, alias = "replaceAll", deserialize_with = "args::opt_bool")]
    replace_all: Option<bool>,
}

#[derive(Debug)]
pub(crate) struct EditPlan {
    input: String,
    pub(crate) path: PathBuf,
    shown: String,
    change: Change,
}

#[derive(Debug)]
enum Change {
    /// The file does not exist: create it with this content.
    Create(String),
    /// The file exists but holds only whitespace: replace it with this content.
    Fill(String),
    /// Replace each exact original region with its replacement.
    Replace {
        pairs: Vec<(String, String)>,
        replace_all: bool,
        strategy: Strategy,
    },
}

pub(crate) fn prepare(context: &ToolContext, arguments: Value) -> Result<Prepared, ToolError> {
    let arguments: EditArgs = args::parse(NAME, arguments)?;
    let path = context.workspace.resolve_for_write(&arguments.path)?;
    let shown = context.workspace.display(&path);
    if arguments.old_string == arguments.new_string {
        return Err(ToolError::refused(
            &shown,
            "old_string and new_string are the same, so nothing would change",
        ));
    }
    let current = read_current(&path, &shown)?;
    let (change, summary, diff) = match current {
        None if arguments.old_string.is_empty() => {
            let content = arguments.new_string;
            let diff = text::unified_diff(None, &content, &shown);
            let summary = format!(
                "Create {shown} ({})",
                text::lines(text::line_count(&content))
            );
            (Change::Create(content), summary, diff)
        }
        None => {
            return Err(ToolError::refused(
                &shown,
                "the file does not exist. Check the path (glob can find it), or create it with write (or edit with an empty old_string)",
            ));
        }
        Some(bytes) => {
            let old = into_text(bytes, &shown)?;
            let (bom, body) = text::split_bom(&old);
            if arguments.old_string.is_empty() {
                if !body.trim().is_empty() {
                    return Err(ToolError::refused(
                        &shown,
                        "old_string is empty but the file already has content. Give the exact text to replace (read the file first), or use write to replace the whole file",
                    ));
                }
                let content = with_bom(bom, arguments.new_string);
                let diff = text::unified_diff(Some(&old), &content, &shown);
                let summary = format!("Fill the empty file {shown}");
                (Change::Fill(content), summary, diff)
            } else {
                let replace_all = arguments.replace_all.unwrap_or(false);
                let located = match matcher::locate(
                    body,
                    &arguments.old_string,
                    &arguments.new_string,
                    replace_all,
                ) {
                    Outcome::Found(located) => located,
                    Outcome::Ambiguous { lines } => {
                        return Err(ToolError::EditAmbiguous {
                            path: shown,
                            count: lines.len(),
                            lines: text::join_numbers(&lines),
                        });
                    }
                    Outcome::NotFound { closest } => {
                        return Err(ToolError::EditNotFound {
                            closest: closest_advice(body, closest),
                            path: shown,
                        });
                    }
                };
                let lines: Vec<usize> = located
                    .replacements
                    .iter()
                    .map(|replacement| text::line_of(body, replacement.range.start))
                    .collect();
                let new_body =
                    keep_final_newline(body, matcher::apply(body, &located.replacements));
                let new_text = with_bom(bom, new_body);
                let diff = text::unified_diff(Some(&old), &new_text, &shown);
                let summary = format!(
                    "Edit {shown}: {}{}",
                    describe_lines(&lines),
                    strategy_note(located.strategy)
                );
                let pairs = located
                    .replacements
                    .into_iter()
                    .map(|replacement| (body[replacement.range].to_owned(), replacement.text))
                    .collect();
                let change = Change::Replace {
                    pairs,
                    replace_all,
                    strategy: located.strategy,
                };
                (change, summary, diff)
            }
        }
    };
    Ok(Prepared {
        tool: NAME,
        kind: ToolKind::Edit,
        proposal: Proposal {
            summary,
            diff: Some(text::cap_diff(diff, context.limits.diff_bytes)),
            command: None,
            path: Some(context.workspace.relative(&path)),
        },
        plan: Plan {
            action: Action::Edit(EditPlan {
                input: arguments.path,
                path,
                shown,
                change,
            }),
        },
    })
}

pub(crate) fn apply(context: &ToolContext, plan: &EditPlan) -> Result<ToolOutput, ToolError> {
    recheck_path(context, &plan.input, &plan.path, &plan.shown)?;
    let shown = &plan.shown;
    let current = read_current(&plan.path, shown)?;
    let (old, new_text, message) = match (&plan.change, current) {
        (Change::Create(content), None) => (
            None,
            content.clone(),
            format!(
                "Created {shown} ({}).",
                text::lines(text::line_count(content))
            ),
        ),
        (Change::Create(_), Some(_)) => {
            return Err(ToolError::refused(
                shown,
                "the file was created by someone else while the edit waited for approval. Read it and redo the edit",
            ));
        }
        (_, None) => {
            return Err(ToolError::refused(
                shown,
                "the file was deleted while the edit waited for approval",
            ));
        }
        (Change::Fill(content), Some(bytes)) => {
            let old = into_text(bytes, shown)?;
            if !text::split_bom(&old).1.trim().is_empty() {
                return Err(ToolError::refused(
                    shown,
                    "the file is no longer empty: it changed while the edit waited for approval. Read it and redo the edit",
                ));
            }
            (Some(old), content.clone(), format!("Filled {shown}."))
        }
        (
            Change::Replace {
                pairs,
                replace_all,
                strategy,
            },
            Some(bytes),
        ) => {
            let old = into_text(bytes, shown)?;
            let (bom, body) = text::split_bom(&old);
            let (new_body, lines) =
                matcher::relocate(body, pairs, *replace_all).map_err(|error| match error {
                    RelocateError::Vanished => ToolError::EditVanished {
                        path: shown.clone(),
                    },
                    RelocateError::Ambiguous { lines } => ToolError::EditNowAmbiguous {
                        path: shown.clone(),
                        count: lines.len(),
                        lines: text::join_numbers(&lines),
                    },
                    RelocateError::CountChanged { expected, found } => ToolError::refused(
                        shown,
                        format!(
                            "replace_all was approved for {expected} occurrences but the file now has {found}: it changed while the edit waited for approval. Read it again and redo the edit"
                        ),
                    ),
                })?;
            let new_text = with_bom(bom, keep_final_newline(body, new_body));
            let message = format!(
                "Edited {shown}: {}{}.",
                describe_lines(&lines),
                strategy_note(*strategy)
            );
            (Some(old), new_text, message)
        }
    };
    let diff = text::unified_diff(old.as_deref(), &new_text, shown);
    write_file(&plan.path, shown, new_text.as_bytes(), old.is_none())?;
    Ok(ToolOutput {
        text: message,
        is_error: false,
        detail: Some(ToolDetail::Diff {
            path: PathBuf::from(shown),
            diff,
        }),
    })
}

fn into_text(bytes: Vec<u8>, shown: &str) -> Result<String, ToolError> {
    let size = bytes.len() as u64;
    let sniff = &bytes[..bytes.len().min(text::SNIFF_BYTES)];
    if let Some(reason) = text::binary_reason(sniff) {
        return Err(ToolError::Binary {
            path: shown.to_owned(),
            size,
            reason,
        });
    }
    String::from_utf8(bytes).map_err(|_| ToolError::Binary {
        path: shown.to_owned(),
        size,
        reason: "it is not valid UTF-8",
    })
}

fn with_bom(bom: bool, body: String) -> String {
    if bom && !body.starts_with(text::BOM) {
        format!("{}{body}", text::BOM)
    } else {
        body
    }
}

/// A file that ended with a newline still does after the edit.
fn keep_final_newline(old: &str, mut new: String) -> String {
    if old.ends_with('\n') && !new.is_empty() && !new.ends_with('\n') {
        new.push_str(text::line_ending(old));
    }
    new
}

fn describe_lines(lines: &[usize]) -> String {
    let mut unique = lines.to_vec();
    unique.dedup();
    let count = lines.len();
    let replacements = if count == 1 {
        "1 replacement".to_owned()
    } else {
        format!("{count} replacements")
    };
    let at = if unique.len() == 1 { "line" } else { "lines" };
    format!("{replacements} at {at} {}", text::join_numbers(&unique))
}

fn strategy_note(strategy: Strategy) -> String {
    match strategy {
        Strategy::Exact => String::new(),
        other => format!(" ({})", other.describe()),
    }
}

fn closest_advice(body: &str, closest: Option<matcher::Closest>) -> String {
    match closest {
        _ if body.trim().is_empty() => " The file is empty.".to_owned(),
        Some(closest) => format!(
            " The closest region is lines {}-{} ({:.0}% similar):\n{}Copy the exact text from the file into old_string (without the line-number prefix) and retry.",
            closest.first_line,
            closest.last_line,
            closest.similarity * 100.0,
            closest.excerpt
        ),
        None => " Nothing in the file is similar. Read the file again and copy the exact text to replace into old_string.".to_owned(),
    }
}
