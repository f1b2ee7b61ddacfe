//! Writing a script a test then runs.
//!
//! A test that writes an executable through a descriptor of its own process and runs it at
//! once races every other test thread that forks: the forked child holds the descriptor, open
//! for writing, until it execs, and running the script meanwhile fails with "Text file busy"
//! (ETXTBSY; seen in CI). A child process that writes the file and exits holds nothing.

use std::io::{self, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};

/// Writes `text` to `path` as an executable (mode 755), through a child process, creating the
/// parent folders.
pub fn write_executable(path: &Path, text: &str) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut child = Command::new("sh")
        .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(text.as_bytes())?;
    }
    let status = child.wait()?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "writing {} failed: {status}",
            path.display()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::write_executable;

    #[test]
    fn the_script_is_written_exactly_and_runs() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("deep/tool.sh");
        let text = "#!/bin/sh\nprintf '%s' \"it ran: $1\"\n";
        write_executable(&path, text).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        let output = std::process::Command::new(&path)
            .arg("yes")
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "it ran: yes");
    }
}
