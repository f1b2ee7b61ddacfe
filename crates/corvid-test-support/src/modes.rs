//! File modes a test checks: files holding secrets are readable by their owner alone.

use std::path::Path;

/// Asserts `path` has mode 0600 (owner read/write, nobody else). Elsewhere than Unix: nothing
/// to check.
pub fn assert_owner_only(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the mode of {}", path.display());
    }
    #[cfg(not(unix))]
    let _ = path;
}
