use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::{PathError, Workspace};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    workspace: Workspace,
}

/// `<tmp>/project` (the workspace) beside `<tmp>/outside` (with `secret.txt` and `dir/`).
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("project");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn main() {}\n").unwrap();
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    let workspace = Workspace::new(&root).unwrap();
    Fixture {
        _dir: dir,
        root,
        outside,
        workspace,
    }
}

#[test]
fn relative_paths_resolve_under_the_root() {
    let f = fixture();
    assert_eq!(
        f.workspace.resolve("src/lib.rs").unwrap(),
        f.root.join("src/lib.rs")
    );
    assert_eq!(
        f.workspace.resolve("./src/../src/lib.rs").unwrap(),
        f.root.join("src/lib.rs")
    );
    assert_eq!(f.workspace.resolve(".").unwrap(), f.root);
    // Not existing yet is fine.
    assert_eq!(
        f.workspace.resolve("new/dir/file.txt").unwrap(),
        f.root.join("new/dir/file.txt")
    );
}

#[test]
fn absolute_paths_inside_are_accepted_and_outside_refused() {
    let f = fixture();
    assert_eq!(
        f.workspace.resolve(f.root.join("src/lib.rs")).unwrap(),
        f.root.join("src/lib.rs")
    );
    let error = f.workspace.resolve("/etc/passwd").unwrap_err();
    assert!(matches!(error, PathError::Outside { .. }), "{error:?}");
    assert!(error.to_string().contains("outside the project folder"));
    let error = f
        .workspace
        .resolve(f.outside.join("secret.txt"))
        .unwrap_err();
    assert!(matches!(error, PathError::Outside { .. }), "{error:?}");
}

#[test]
fn dot_dot_leaving_the_root_is_refused() {
    let f = fixture();
    for path in [
        "..",
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        "src/../../project/../outside",
    ] {
        let error = f.workspace.resolve(path).unwrap_err();
        assert!(
            matches!(error, PathError::Outside { .. }),
            "{path}: {error:?}"
        );
    }
    // Out and back in again is still inside.
    assert_eq!(
        f.workspace.resolve("../project/src/lib.rs").unwrap(),
        f.root.join("src/lib.rs")
    );
}

#[test]
fn dot_dot_after_a_missing_folder_is_refused() {
    let f = fixture();
    let error = f.workspace.resolve("missing/../../outside").unwrap_err();
    assert!(
        matches!(error, PathError::ParentOfMissing { .. }),
        "{error:?}"
    );
}

#[test]
fn symlinked_directory_leading_out_is_refused() {
    let f = fixture();
    symlink(f.outside.join("dir"), f.root.join("linkdir")).unwrap();
    for path in ["linkdir", "linkdir/file.txt", "linkdir/../secret.txt"] {
        let error = f.workspace.resolve(path).unwrap_err();
        assert!(
            matches!(error, PathError::SymlinkOutside { .. }),
            "{path}: {error:?}"
        );
        assert!(
            error.to_string().contains("symbolic link linkdir"),
            "{error}"
        );
    }
}

#[test]
fn symlinked_file_leading_out_is_refused() {
    let f = fixture();
    symlink(f.outside.join("secret.txt"), f.root.join("secret.txt")).unwrap();
    let error = f.workspace.resolve("secret.txt").unwrap_err();
    assert!(
        matches!(error, PathError::SymlinkOutside { .. }),
        "{error:?}"
    );
    let error = f.workspace.resolve_for_write("secret.txt").unwrap_err();
    assert!(
        matches!(error, PathError::SymlinkOutside { .. }),
        "{error:?}"
    );
}

#[test]
fn symlink_in_a_not_yet_existing_path_is_refused() {
    let f = fixture();
    symlink(f.outside.join("dir"), f.root.join("linkdir")).unwrap();
    let error = f
        .workspace
        .resolve_for_write("linkdir/new/deeper/file.txt")
        .unwrap_err();
    assert!(
        matches!(error, PathError::SymlinkOutside { .. }),
        "{error:?}"
    );
}

#[test]
fn dangling_symlinks_are_followed_before_deciding() {
    let f = fixture();
    symlink(f.outside.join("not-yet.txt"), f.root.join("dangling-out")).unwrap();
    let error = f.workspace.resolve_for_write("dangling-out").unwrap_err();
    assert!(
        matches!(error, PathError::SymlinkOutside { .. }),
        "{error:?}"
    );
    symlink("src/future.rs", f.root.join("dangling-in")).unwrap();
    assert_eq!(
        f.workspace.resolve_for_write("dangling-in").unwrap(),
        f.root.join("src/future.rs")
    );
}

#[test]
fn symlinks_that_stay_inside_resolve_to_their_target() {
    let f = fixture();
    symlink("src", f.root.join("code")).unwrap();
    symlink("../src/lib.rs", f.root.join("src/alias.rs")).unwrap();
    assert_eq!(
        f.workspace.resolve("code/lib.rs").unwrap(),
        f.root.join("src/lib.rs")
    );
    assert_eq!(
        f.workspace.resolve("src/alias.rs").unwrap(),
        f.root.join("src/lib.rs")
    );
}

#[test]
fn symlink_loops_are_refused() {
    let f = fixture();
    symlink("b", f.root.join("a")).unwrap();
    symlink("a", f.root.join("b")).unwrap();
    let error = f.workspace.resolve("a").unwrap_err();
    assert!(matches!(error, PathError::SymlinkLoop { .. }), "{error:?}");
}

#[test]
fn git_internals_are_readable_but_never_written() {
    let f = fixture();
    assert_eq!(
        f.workspace.resolve(".git/config").unwrap(),
        f.root.join(".git/config")
    );
    for path in [
        ".git/config",
        ".git/hooks/pre-commit",
        ".GIT/config",
        "sub/.git/x",
    ] {
        let error = f.workspace.resolve_for_write(path).unwrap_err();
        assert!(
            matches!(error, PathError::Protected { .. }),
            "{path}: {error:?}"
        );
    }
    // Through a symbolic link that stays inside: still refused.
    symlink(".git", f.root.join("gitdir")).unwrap();
    let error = f.workspace.resolve_for_write("gitdir/config").unwrap_err();
    assert!(matches!(error, PathError::Protected { .. }), "{error:?}");
    // A file merely named like it is fine.
    assert!(f.workspace.resolve_for_write(".gitignore").is_ok());
}

#[test]
fn extra_protected_folders_and_the_root_itself() {
    let f = fixture();
    let workspace = f.workspace.clone().protect(".corvid");
    let error = workspace
        .resolve_for_write(".corvid/config.toml")
        .unwrap_err();
    assert!(matches!(error, PathError::Protected { .. }), "{error:?}");
    let error = f.workspace.resolve_for_write(".").unwrap_err();
    assert!(matches!(error, PathError::IsRoot { .. }), "{error:?}");
    assert!(matches!(
        f.workspace.resolve("").unwrap_err(),
        PathError::Empty
    ));
}

#[test]
fn relative_display() {
    let f = fixture();
    assert_eq!(
        f.workspace.display(&f.root.join("src/lib.rs")),
        "src/lib.rs"
    );
    assert_eq!(f.workspace.display(&f.root), ".");
    assert_eq!(f.workspace.relative(Path::new("/etc")), Path::new("/etc"));
}
