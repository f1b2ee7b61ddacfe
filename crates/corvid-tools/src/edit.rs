//! `edit`: replace text in a file, located by the matcher cascade (see `matcher`).
//!
//! Decisions:
//! - An empty `old_string` creates the file when it does not exist, and fills it when it exists
//!   but holds only whitespace. On a file with content it is refused: overwriting a whole file by
//!   accident is the failure users report (use `write` for that).
//! - The file's line endings, byte order mark and final newline are kept.
//! - The plan keeps the model's strings and the exact file text that matched. `apply` runs the
//!   same matcher on the current file (`matcher::relocate`): moved is fine, and so is a change
//!   elsewhere; a change inside the matched region, a vanished or a now ambiguous target is
//!   refused, with line numbers.
//! - A tolerant match whose adapted text leaves the file as it is (the only difference was
//!   what the matcher folds away) is refused: nothing would change.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::args;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::matcher::{self, Approved, Miss, Outcome, RelocateError};
use crate::text;
use crate::tool::{
    Action, BuiltinSpec, Plan, Prepared, Proposal, ToolDetail, ToolKind, ToolOutput,
};
use crate::write::{read_current, recheck_path, write_file};

pub(crate) const NAME: &str = "edit";

pub(crate) fn spec() -> BuiltinSpec {
    BuiltinSpec {
        name: NAME,
        description: "Replace text in a file. old_string must match one place in the file: copy it from `read` output \
            without the line-number prefix, every line in full, whole words, with enough surrounding lines to be \
            unique (a `// ... existing code ...` line is allowed only when new_string repeats it at the same place: \
            the lines it stands for are kept). Small whitespace, indentation and quote slips are forgiven (what is \
            written keeps the file's style); an ambiguous match is refused with the candidate line numbers, and a \
            miss shows the closest region and the lines that differ. Set replace_all to change every occurrence. \
            An empty old_string creates a file that does not exist yet. The user may be asked to approve the diff.",
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
    /// Replace the approved regions, located again when applied.
    Replace {
        approved: Approved,
        /// What the matcher forgave, for the result.
        note: String,
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
    let current = read_current(context, &path, &shown)?;
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
                    Outcome::NotFound(miss) => {
                        return Err(ToolError::EditNotFound {
                            closest: miss_advice(body, miss),
                            path: shown,
                        });
                    }
                };
                let note = located.note();
                let lines: Vec<usize> = located
                    .replacements
                    .iter()
                    .map(|replacement| text::line_of(body, replacement.range.start))
                    .collect();
                let new_body =
                    keep_final_newline(body, matcher::apply(body, &located.replacements));
                if new_body == body {
                    return Err(ToolError::refused(
                        &shown,
                        format!(
                            "old_string was found{note}, but new_string differs from it only in what the matcher ignores, so nothing would change. To change only quotes or whitespace, copy old_string exactly from the file"
                        ),
                    ));
                }
                let new_text = with_bom(bom, new_body);
                let diff = text::unified_diff(Some(&old), &new_text, &shown);
                let summary = format!("Edit {shown}: {}{note}", describe_lines(&lines));
                let approved = Approved::new(
                    body,
                    &arguments.old_string,
                    &arguments.new_string,
                    replace_all,
                    &located,
                );
                let change = Change::Replace { approved, note };
                (change, summary, diff)
            }
        }
    };
    Ok(Prepared {
        tool: NAME.to_owned(),
        kind: ToolKind::Edit,
        proposal: Proposal {
            summary,
            diff: Some(text::cap_diff(diff, context.limits.diff_bytes)),
            whole_file: false,
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
    let current = read_current(context, &plan.path, shown)?;
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
        (Change::Replace { approved, note }, Some(bytes)) => {
            let old = into_text(bytes, shown)?;
            let (bom, body) = text::split_bom(&old);
            let (new_body, lines) =
                matcher::relocate(body, approved).map_err(|error| match error {
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
                    RelocateError::Changed { first, last } => ToolError::refused(
                        shown,
                        format!(
                            "{}, which the edit replaces, changed while the edit waited for approval. Read the file again and redo the edit",
                            if first == last { format!("line {first}") } else { format!("lines {first}-{last}") }
                        ),
                    ),
                })?;
            let new_text = with_bom(bom, keep_final_newline(body, new_body));
            let message = format!("Edited {shown}: {}{note}.", describe_lines(&lines));
            (Some(old), new_text, message)
        }
    };
    let diff = text::unified_diff(old.as_deref(), &new_text, shown);
    write_file(
        context,
        &plan.path,
        shown,
        new_text.as_bytes(),
        old.is_none(),
    )?;
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

fn miss_advice(body: &str, miss: Miss) -> String {
    if body.trim().is_empty() {
        return " The file is empty.".to_owned();
    }
    let mut advice = String::new();
    if !miss.inside_words.is_empty() {
        let places: Vec<String> = miss
            .inside_words
            .iter()
            .map(|(line, text)| format!("line {line} (`{}`)", text::cut_line(text.trim(), 80)))
            .collect();
        advice.push_str(&format!(
            " It occurs only inside a longer word, at {}: quote whole words, with the text around them.",
            places.join(", ")
        ));
    }
    if let Some(elided) = &miss.elision {
        let (line, text) = (elided.line, elided.text.trim());
        if elided.repeated {
            advice.push_str(&format!(
                " Line {line} of old_string (`{text}`) stands for lines kept as they are, but the quoted pieces around it are not each found once, in this order."
            ));
        } else {
            advice.push_str(&format!(
                " Line {line} of old_string (`{text}`) stands for lines it does not quote, and new_string does not repeat it at the same place, so those lines would be replaced unseen. Quote every line of the region, repeat that line unchanged in new_string to keep the lines it stands for, or make one edit per changed place."
            ));
        }
    }
    let mut candidates = miss.candidates.into_iter();
    match candidates.next() {
        Some(best) => {
            advice.push_str(&format!(
                " The closest region is lines {}-{} ({:.0}% similar):\n{}",
                best.first_line,
                best.last_line,
                best.similarity * 100.0,
                best.excerpt
            ));
            for note in &best.notes {
                advice.push_str(&format!("- {note}\n"));
            }
            let others: Vec<String> = candidates
                .map(|other| {
                    format!(
                        "lines {}-{} ({:.0}%)",
                        other.first_line,
                        other.last_line,
                        other.similarity * 100.0
                    )
                })
                .collect();
            if !others.is_empty() {
                advice.push_str(&format!("Other similar places: {}.\n", others.join(", ")));
            }
            advice.push_str("Copy the exact text from the file into old_string (without the line-number prefix) and retry.");
        }
        None if advice.is_empty() => advice.push_str(" Nothing in the file is similar. Read the file again and copy the exact text to replace into old_string."),
        None => {}
    }
    advice
}
