use super::*;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

/// A folder holding an executable `name` that runs `script`.
fn tool(name: &str, script: &str) -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join(name);
    // Written by a child process, not through a descriptor of this one: a test on another
    // thread that forks meanwhile would hold the file open for writing until its child execs,
    // and running the tool would then fail with "Text file busy" (seen in CI).
    let written = std::process::Command::new("sh")
        .args([
            "-c",
            "printf '%s\\n' \"$2\" > \"$1\" && chmod 755 \"$1\"",
            "sh",
        ])
        .arg(&file)
        .arg(format!("#!/bin/sh\n{script}"))
        .status()
        .unwrap();
    assert!(written.success());
    folder
}

fn env_with(folder: &std::path::Path, wayland: bool) -> ClipboardEnv {
    ClipboardEnv {
        path: Some(folder.as_os_str().to_owned()),
        wayland,
    }
}

#[test]
fn the_clipboard_image_comes_from_wl_paste_on_wayland() {
    let source = tempfile::tempdir().unwrap();
    let png = source.path().join("shot.png");
    std::fs::write(&png, PNG).unwrap();
    let folder = tool(
        "wl-paste",
        &format!(
            "[ \"$*\" = '--no-newline --type image/png' ] && cat '{}'",
            png.display()
        ),
    );
    assert_eq!(image(&env_with(folder.path(), true)).unwrap(), PNG);
    // Without Wayland, wl-paste is not asked.
    assert_eq!(
        image(&env_with(folder.path(), false)),
        Err(ClipboardError::NoTool)
    );
}

#[test]
fn xclip_without_an_image_says_so_and_no_tool_says_what_to_install() {
    let folder = tool(
        "xclip",
        "echo 'Error: target image/png not available' >&2; exit 1",
    );
    assert_eq!(
        image(&env_with(folder.path(), false)),
        Err(ClipboardError::NoImage { tool: "xclip" })
    );
    let empty = tempfile::tempdir().unwrap();
    let error = image(&env_with(empty.path(), true)).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("no clipboard image tool found"),
        "{error}"
    );
}
