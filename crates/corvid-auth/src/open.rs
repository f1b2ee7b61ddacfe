//! Opening the sign-in URL in the user's browser, when there is one.

use std::process::{Command, Stdio};

/// Tries to open `url` in a browser: `open` on macOS, `xdg-open` on Linux with a display
/// (`DISPLAY` / `WAYLAND_DISPLAY`), `wslview` under WSL. Returns whether a launcher started;
/// never fails loudly (the caller prints the URL anyway).
pub fn open_in_browser(url: &str) -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    let platform = Platform {
        macos: cfg!(target_os = "macos"),
        windows: cfg!(windows),
        display: set("DISPLAY") || set("WAYLAND_DISPLAY"),
        wsl: set("WSL_DISTRO_NAME") || set("WSL_INTEROP"),
    };
    launchers(platform)
        .into_iter()
        .any(|(program, args)| launch(program, args, url))
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Platform {
    pub(crate) macos: bool,
    pub(crate) windows: bool,
    pub(crate) display: bool,
    pub(crate) wsl: bool,
}

/// The launchers to try, in order, on `platform`.
pub(crate) fn launchers(platform: Platform) -> Vec<(&'static str, &'static [&'static str])> {
    let mut found: Vec<(&'static str, &'static [&'static str])> = Vec::new();
    if platform.macos {
        found.push(("open", &[]));
    } else if platform.windows {
        found.push(("rundll32", &["url.dll,FileProtocolHandler"]));
    } else {
        if platform.wsl {
            found.push(("wslview", &[]));
        }
        if platform.display {
            found.push(("xdg-open", &[]));
        }
    }
    found
}

fn launch(program: &str, args: &[&str], url: &str) -> bool {
    let child = Command::new(program)
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match child {
        Ok(mut child) => {
            // Reap it without making the login wait for the browser.
            std::thread::spawn(move || child.wait());
            true
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests;
