//! The clipboard's image, where the platform offers a tool that hands it over: `wl-paste` on
//! Wayland, `xclip` on X11, `pngpaste` on macOS. The terminal itself only ever pastes text.

use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a clipboard tool may take (one without a clipboard owner can wait for ever).
const TOOL_PATIENCE: Duration = Duration::from_secs(3);

/// Why no image came from the clipboard.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ClipboardError {
    #[error(
        "no clipboard image tool found: install wl-clipboard (Wayland), xclip (X11) or pngpaste (macOS), or paste the image's path"
    )]
    NoTool,
    #[error("the clipboard holds no PNG image ({tool} found none)")]
    NoImage { tool: &'static str },
    #[error("{tool} failed: {message}")]
    Failed { tool: &'static str, message: String },
}

/// Where to look for the tools, and which display the session has.
#[derive(Debug, Clone, Default)]
pub struct ClipboardEnv {
    /// The `PATH` to search.
    pub path: Option<OsString>,
    /// `WAYLAND_DISPLAY` is set.
    pub wayland: bool,
}

impl ClipboardEnv {
    /// This process's environment.
    pub fn current() -> Self {
        Self {
            path: std::env::var_os("PATH"),
            wayland: std::env::var_os("WAYLAND_DISPLAY").is_some(),
        }
    }

    /// The tools to try, in order, with their arguments to print the clipboard's PNG.
    fn tools(&self) -> Vec<(&'static str, &'static [&'static str])> {
        let mut tools: Vec<(&'static str, &'static [&'static str])> = Vec::new();
        if self.wayland {
            tools.push(("wl-paste", &["--no-newline", "--type", "image/png"]));
        }
        tools.push((
            "xclip",
            &["-selection", "clipboard", "-t", "image/png", "-o"],
        ));
        if cfg!(target_os = "macos") {
            tools.push(("pngpaste", &["-"]));
        }
        tools
    }

    fn find(&self, name: &str) -> Option<PathBuf> {
        let path = self.path.as_ref()?;
        std::env::split_paths(path)
            .map(|folder| folder.join(name))
            .find(|candidate| candidate.is_file())
    }
}

/// The clipboard's image bytes, from the first tool found.
pub fn image(env: &ClipboardEnv) -> Result<Vec<u8>, ClipboardError> {
    let Some((tool, program, arguments)) = env
        .tools()
        .into_iter()
        .find_map(|(tool, arguments)| env.find(tool).map(|program| (tool, program, arguments)))
    else {
        return Err(ClipboardError::NoTool);
    };
    let failed = |message: String| ClipboardError::Failed { tool, message };
    let mut child = Command::new(program)
        .args(arguments)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| failed(error.to_string()))?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| failed("no output pipe".to_owned()))?;
    // Read on a thread, so a tool that never ends is stopped after its time.
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).map(|_| bytes)
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > TOOL_PATIENCE => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(failed(format!(
                    "no answer within {} s",
                    TOOL_PATIENCE.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(error) => return Err(failed(error.to_string())),
        }
    };
    let bytes = reader
        .join()
        .map_err(|_| failed("its output could not be read".to_owned()))?
        .map_err(|error| failed(error.to_string()))?;
    if !status.success() || corvid_agent::images::sniff_media_type(&bytes).is_none() {
        return Err(ClipboardError::NoImage { tool });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests;
