//! Copying text to the desktop's clipboard through the platform's own tool (`pbcopy` on
//! macOS; `wl-copy`, `xclip` or `xsel` on Linux), so the app links no windowing library.

use std::io::Write;
use std::process::{Command, Stdio};

/// No clipboard tool worked.
#[derive(Debug, thiserror::Error)]
#[error("no clipboard tool worked (tried {tried})")]
pub(crate) struct NoClipboard {
    tried: String,
}

/// The tools to try, in order, for this desktop.
fn tools(macos: bool, wayland: bool) -> Vec<(&'static str, &'static [&'static str])> {
    if macos {
        return vec![("pbcopy", &[])];
    }
    let mut tools: Vec<(&'static str, &'static [&'static str])> = Vec::new();
    if wayland {
        tools.push(("wl-copy", &[]));
    }
    tools.push(("xclip", &["-selection", "clipboard"]));
    tools.push(("xsel", &["--clipboard", "--input"]));
    tools
}

/// Puts `text` on the clipboard with the first tool that takes it.
pub(crate) fn copy(text: &str) -> Result<(), NoClipboard> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|value| !value.is_empty());
    let tools = tools(cfg!(target_os = "macos"), wayland);
    for (program, args) in &tools {
        if run(program, args, text) {
            return Ok(());
        }
    }
    Err(NoClipboard {
        tried: tools
            .iter()
            .map(|(program, _)| *program)
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// Feeds `text` to `program` and reports whether it took it. (xclip and wl-copy keep serving
/// the selection in a process of their own after this one returns.)
fn run(program: &str, args: &[&str], text: &str) -> bool {
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    let written = child
        .stdin
        .take()
        .is_some_and(|mut stdin| stdin.write_all(text.as_bytes()).is_ok());
    child.wait().is_ok_and(|status| status.success()) && written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macos_uses_pbcopy_and_linux_prefers_wayland_then_x11_tools() {
        let names = |tools: Vec<(&str, &[&str])>| -> Vec<String> {
            tools.into_iter().map(|(name, _)| name.to_owned()).collect()
        };
        assert_eq!(names(tools(true, true)), ["pbcopy"]);
        assert_eq!(names(tools(false, true)), ["wl-copy", "xclip", "xsel"]);
        assert_eq!(names(tools(false, false)), ["xclip", "xsel"]);
    }

    #[test]
    fn a_missing_tool_is_not_taken_for_a_copy() {
        assert!(!run("corvid-no-such-clipboard-tool", &[], "text"));
    }
}
