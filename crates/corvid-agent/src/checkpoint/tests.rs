use std::path::Path;

use corvid_protocol::ChangeKind;

use super::shadow::{Changed, MAX_FILE_BYTES, RestoreError, ShadowError, ShadowRepo};

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(root: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(root.join(path)).ok()
}

fn names(changes: &[Changed]) -> Vec<(String, ChangeKind)> {
    let mut names: Vec<_> = changes
        .iter()
        .map(|change| {
            (
                String::from_utf8_lossy(&change.path).into_owned(),
                change.change,
            )
        })
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    names
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn a_turn_is_put_back_in_a_folder_that_is_not_a_repository() {
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    write(root, "keep.txt", "unchanged\n");
    write(root, "edit.txt", "one\ntwo\n");
    write(root, "gone/old.txt", "old\n");
    let repo = ShadowRepo::new(data.path(), root);
    let before = repo.snapshot().await.unwrap();

    write(root, "edit.txt", "one\nTWO\n");
    std::fs::remove_dir_all(root.join("gone")).unwrap();
    write(root, "new/deep/file.txt", "new\n");
    let after = repo.snapshot().await.unwrap();
    assert_ne!(before, after);
    assert_eq!(
        names(&repo.changes(&before, &after).await.unwrap()),
        [
            ("edit.txt".to_owned(), ChangeKind::Modified),
            ("gone/old.txt".to_owned(), ChangeKind::Deleted),
            ("new/deep/file.txt".to_owned(), ChangeKind::Added),
        ]
    );
    let diff = repo.diff(&before, &after).await.unwrap();
    assert!(diff.contains("--- a/edit.txt\n+++ b/edit.txt\n"), "{diff}");
    assert!(diff.contains("-two\n+TWO\n"), "{diff}");

    let restored = repo.restore(&before, &after).await.unwrap();
    assert_eq!(restored.len(), 3);
    assert_eq!(read(root, "edit.txt").as_deref(), Some("one\ntwo\n"));
    assert_eq!(read(root, "gone/old.txt").as_deref(), Some("old\n"));
    assert_eq!(read(root, "keep.txt").as_deref(), Some("unchanged\n"));
    assert!(
        !root.join("new").exists(),
        "the folders the turn made go too"
    );
    assert!(
        !root.join(".git").exists(),
        "no repository appears in the project"
    );
}

#[tokio::test]
async fn a_file_changed_after_the_turn_refuses_the_whole_undo() {
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    write(root, "a.txt", "a\n");
    write(root, "b.txt", "b\n");
    let repo = ShadowRepo::new(data.path(), root);
    let before = repo.snapshot().await.unwrap();
    write(root, "a.txt", "agent a\n");
    write(root, "b.txt", "agent b\n");
    let after = repo.snapshot().await.unwrap();
    write(root, "b.txt", "the user's b\n");

    match repo.restore(&before, &after).await {
        Err(RestoreError::Conflicts(files)) => assert_eq!(files, ["b.txt"]),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(
        read(root, "a.txt").as_deref(),
        Some("agent a\n"),
        "nothing restored"
    );
    assert_eq!(read(root, "b.txt").as_deref(), Some("the user's b\n"));
}

#[tokio::test]
async fn ignored_and_large_files_stay_out_and_the_projects_git_is_untouched() {
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    git(root, &["init", "-q"]);
    write(root, ".gitignore", "target/\n");
    write(root, "src/lib.rs", "fn a() {}\n");
    git(root, &["add", "-A"]);
    git(
        root,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "first",
        ],
    );
    let status = git(root, &["status", "--porcelain"]);
    let head = git(root, &["rev-parse", "HEAD"]);
    let index = std::fs::read(root.join(".git/index")).unwrap();

    let repo = ShadowRepo::new(data.path(), root);
    let before = repo.snapshot().await.unwrap();
    write(root, "target/debug/out.bin", "built\n");
    write(root, "big.dat", &"x".repeat(MAX_FILE_BYTES as usize + 1));
    write(root, "src/lib.rs", "fn b() {}\n");
    let after = repo.snapshot().await.unwrap();
    assert_eq!(
        names(&repo.changes(&before, &after).await.unwrap()),
        [("src/lib.rs".to_owned(), ChangeKind::Modified)],
        "ignored and large files are not snapshotted"
    );
    // A file that was small when first snapshotted leaves the snapshots when it grows.
    write(root, "grows.txt", "small\n");
    let small = repo.snapshot().await.unwrap();
    write(root, "grows.txt", &"y".repeat(MAX_FILE_BYTES as usize + 1));
    let grown = repo.snapshot().await.unwrap();
    assert_eq!(
        names(&repo.changes(&small, &grown).await.unwrap()),
        [("grows.txt".to_owned(), ChangeKind::Deleted)]
    );

    repo.restore(&before, &after).await.unwrap();
    assert_eq!(read(root, "src/lib.rs").as_deref(), Some("fn a() {}\n"));
    assert_eq!(git(root, &["rev-parse", "HEAD"]), head);
    assert_eq!(std::fs::read(root.join(".git/index")).unwrap(), index);
    let now = git(root, &["status", "--porcelain"]);
    assert_eq!(
        now.lines()
            .filter(|line| !line.contains("big.dat") && !line.contains("grows.txt"))
            .collect::<Vec<_>>(),
        status.lines().collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_missing_git_is_a_clear_error() {
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let repo = ShadowRepo::new(data.path(), project.path())
        .with_program(Path::new("/nonexistent/corvid-test-git"));
    let error = repo.snapshot().await.unwrap_err();
    assert!(matches!(error, ShadowError::GitMissing), "{error:?}");
    assert!(error.to_string().contains("`git` program"), "{error}");
}

#[tokio::test]
async fn two_projects_get_two_shadow_repositories() {
    let data = tempfile::tempdir().unwrap();
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    write(first.path(), "f.txt", "1\n");
    write(second.path(), "f.txt", "2\n");
    let one = ShadowRepo::new(data.path(), first.path())
        .snapshot()
        .await
        .unwrap();
    let two = ShadowRepo::new(data.path(), second.path())
        .snapshot()
        .await
        .unwrap();
    assert_ne!(one, two);
    assert_eq!(std::fs::read_dir(data.path()).unwrap().count(), 2);
}

#[tokio::test]
async fn a_stale_index_lock_is_cleared_and_a_fresh_one_respected() {
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(project.path(), "f.txt", "1\n");
    let repo = ShadowRepo::new(data.path(), project.path());
    repo.snapshot().await.unwrap();
    let shadow = std::fs::read_dir(data.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let lock = shadow.join("index.lock");
    std::fs::write(&lock, "").unwrap();
    assert!(
        matches!(repo.snapshot().await, Err(ShadowError::Git { .. })),
        "a running snapshot's lock is not taken away"
    );
    let file = std::fs::File::options().write(true).open(&lock).unwrap();
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3_600))
        .unwrap();
    drop(file);
    write(project.path(), "f.txt", "2\n");
    repo.snapshot().await.unwrap();
    assert!(!lock.exists());
}

#[tokio::test]
async fn a_project_with_too_many_files_is_not_snapshotted() {
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    for index in 0..6 {
        write(project.path(), &format!("deps/{index}.js"), "x\n");
    }
    let repo = ShadowRepo::new(data.path(), project.path()).with_max_files(5);
    let error = repo.snapshot().await.unwrap_err();
    assert!(matches!(error, ShadowError::TooManyFiles(5)), "{error:?}");
    assert!(error.to_string().contains(".gitignore"), "{error}");
    // Ignored, they do not count.
    write(project.path(), ".gitignore", "deps/\n");
    repo.snapshot().await.unwrap();
}
