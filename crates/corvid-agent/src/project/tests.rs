use super::*;

#[test]
fn the_nearest_folder_with_git_is_the_root_and_the_start_stays_the_working_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let deep = root.join("crates/app/src");
    std::fs::create_dir_all(&deep).unwrap();
    assert_eq!(find_project_root(&deep), root);
    assert_eq!(
        project_folders(&deep, None),
        ProjectFolders {
            root: root.clone(),
            cwd: deep
        }
    );
}

#[test]
fn a_git_file_counts_as_a_worktree_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let worktree = root.join("wt");
    std::fs::create_dir_all(worktree.join("sub")).unwrap();
    std::fs::write(worktree.join(".git"), "gitdir: ../.git/worktrees/wt\n").unwrap();
    assert_eq!(find_project_root(&worktree.join("sub")), worktree);
}

#[test]
fn the_search_stops_below_the_home_folder() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().canonicalize().unwrap();
    // A home folder kept in git must not make every folder under it one project.
    std::fs::create_dir_all(home.join(".git")).unwrap();
    let scratch = home.join("code/scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    assert_eq!(root_below(&scratch, Some(&home)), scratch);
    assert_eq!(root_below(&home, Some(&home)), home);
    // A repository under the home folder is still found.
    std::fs::create_dir_all(home.join("code/.git")).unwrap();
    assert_eq!(root_below(&scratch, Some(&home)), home.join("code"));
}

#[test]
fn without_git_the_start_folder_is_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let start = dir.path().canonicalize().unwrap().join("plain");
    std::fs::create_dir_all(&start).unwrap();
    // No `.git` here or (in a temporary folder) above it.
    assert_eq!(find_project_root(&start), start);
}

#[test]
fn an_explicit_project_wins_and_a_cwd_outside_it_becomes_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(base.join(".git")).unwrap();
    let project = base.join("project");
    let elsewhere = base.join("elsewhere");
    std::fs::create_dir_all(project.join("sub")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    assert_eq!(
        project_folders(&project.join("sub"), Some(&project)),
        ProjectFolders {
            root: project.clone(),
            cwd: project.join("sub")
        }
    );
    assert_eq!(
        project_folders(&elsewhere, Some(&project)),
        ProjectFolders {
            root: project.clone(),
            cwd: project
        }
    );
}
