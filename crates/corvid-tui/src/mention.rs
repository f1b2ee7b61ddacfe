//! `@path` mentions: completing a path inside the project, and attaching the mentioned files'
//! content to the message the model receives (an image's the engine attaches, as an image). A mention never reaches outside the project.

use std::path::Path;

/// The most bytes of one file attached.
const FILE_CAP: u64 = 256 * 1024;

/// Paths under the project starting with `partial` (`src/ma` → `src/main.rs`); folders end
/// with `/`. Hidden entries only when asked for (`partial`'s last part starts with `.`).
pub(crate) fn complete(project: &Path, partial: &str) -> Vec<String> {
    let (folder, prefix) = match partial.rfind('/') {
        Some(index) => (&partial[..=index], &partial[index + 1..]),
        None => ("", partial),
    };
    if folder.split('/').any(|part| part == "..") {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(project.join(folder)) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let slash = if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                "/"
            } else {
                ""
            };
            Some(format!("{folder}{name}{slash}"))
        })
        .collect();
    found.sort();
    found
}

/// The message with each mentioned file's content appended, and a note per file for the user.
pub(crate) fn expand(project: &Path, text: &str) -> (String, Vec<String>) {
    let mut message = text.to_owned();
    let mut notes = Vec::new();
    let Ok(root) = project.canonicalize() else {
        return (message, notes);
    };
    let mut seen = Vec::new();
    for word in text.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        let path = path.trim_end_matches([',', '.', ':', ';', ')', '?', '!']);
        if path.is_empty() || seen.contains(&path) {
            continue;
        }
        // The engine attaches project images itself, as images.
        if corvid_agent::images::is_image_path(path) {
            seen.push(path);
            if root.join(path).is_file() {
                notes.push(format!("@{path} goes to the model as an image"));
            }
            continue;
        }
        let Ok(file) = root.join(path).canonicalize() else {
            continue;
        };
        if !file.starts_with(&root) || !file.is_file() {
            continue;
        }
        seen.push(path);
        let size = file.metadata().map_or(0, |meta| meta.len());
        if size > FILE_CAP {
            notes.push(format!(
                "@{path} is {size} bytes, over the {FILE_CAP}-byte cap: not attached"
            ));
            continue;
        }
        match std::fs::read_to_string(&file) {
            Ok(content) => {
                notes.push(format!(
                    "attached @{path} ({})",
                    crate::render::plural(content.lines().count() as u64, "line")
                ));
                message.push_str(&format!("\n\n<file path=\"{path}\">\n{content}\n</file>"));
            }
            Err(_) => notes.push(format!("@{path} is not a text file: not attached")),
        }
    }
    (message, notes)
}
