use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::*;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("project")).unwrap();
    dir
}

#[test]
fn loads_agents_md_from_root_down_to_the_working_folder() {
    let dir = project();
    let root = dir.path().join("project");
    write(&root, "AGENTS.md", "Run `cargo test`.\n");
    write(&root, "crates/AGENTS.md", "Crates are libraries.\n");
    write(&root, "crates/core/AGENTS.md", "No IO in core.\n\n");
    write(&root, "crates/other/AGENTS.md", "Not on the way down.\n");
    write(
        &root,
        "crates/core/src/AGENTS.md",
        "Below the working folder.\n",
    );

    let instructions = load_instructions(&root, &root.join("crates/core"), DEFAULT_CAP_BYTES);

    assert_eq!(
        instructions,
        Instructions {
            text: "Instructions from AGENTS.md (the whole project):\n\n\
                   Run `cargo test`.\n\n\
                   Instructions from crates/AGENTS.md (for work under crates/; they take precedence over the files above):\n\n\
                   Crates are libraries.\n\n\
                   Instructions from crates/core/AGENTS.md (for work under crates/core/; they take precedence over the files above):\n\n\
                   No IO in core."
                .to_owned(),
            files: vec![
                PathBuf::from("AGENTS.md"),
                PathBuf::from("crates/AGENTS.md"),
                PathBuf::from("crates/core/AGENTS.md"),
            ],
            truncated: false,
            warnings: vec![],
        }
    );
}

#[test]
fn a_relative_working_folder_is_taken_from_the_root() {
    let dir = project();
    let root = dir.path().join("project");
    write(&root, "AGENTS.md", "root");
    write(&root, "app/AGENTS.md", "app");

    let instructions = load_instructions(&root, Path::new("app"), DEFAULT_CAP_BYTES);

    assert_eq!(
        instructions.files,
        vec![PathBuf::from("AGENTS.md"), PathBuf::from("app/AGENTS.md")]
    );
}

#[test]
fn claude_md_is_read_only_where_there_is_no_agents_md() {
    let dir = project();
    let root = dir.path().join("project");
    write(&root, "CLAUDE.md", "root alias");
    write(&root, "web/AGENTS.md", "web rules");
    write(&root, "web/CLAUDE.md", "shadowed");

    let instructions = load_instructions(&root, &root.join("web"), DEFAULT_CAP_BYTES);

    assert_eq!(
        instructions.files,
        vec![PathBuf::from("CLAUDE.md"), PathBuf::from("web/AGENTS.md")]
    );
    assert!(
        instructions
            .text
            .contains("Instructions from CLAUDE.md (the whole project):\n\nroot alias")
    );
    assert!(!instructions.text.contains("shadowed"));
}

#[test]
fn no_files_gives_empty_instructions() {
    let dir = project();
    let root = dir.path().join("project");
    write(&root, "sub/README.md", "not instructions");
    write(&root, "sub/AGENTS.md", "  \n\n");

    assert_eq!(
        load_instructions(&root, &root.join("sub"), DEFAULT_CAP_BYTES),
        Instructions::default()
    );
}

#[test]
fn a_byte_order_mark_is_dropped() {
    let dir = project();
    let root = dir.path().join("project");
    write(&root, "AGENTS.md", "\u{feff}# Rules");

    let instructions = load_instructions(&root, &root, DEFAULT_CAP_BYTES);

    assert_eq!(
        instructions.text,
        "Instructions from AGENTS.md (the whole project):\n\n# Rules"
    );
}

#[test]
fn a_working_folder_outside_the_root_is_refused() {
    let dir = project();
    let root = dir.path().join("project");
    write(&root, "AGENTS.md", "inside");
    write(dir.path(), "elsewhere/AGENTS.md", "OUTSIDE");
    write(dir.path(), "AGENTS.md", "PARENT");

    for cwd in [
        dir.path().join("elsewhere"),
        root.join("../elsewhere"),
        PathBuf::from("../elsewhere"),
    ] {
        let instructions = load_instructions(&root, &cwd, DEFAULT_CAP_BYTES);

        assert_eq!(
            instructions.files,
            vec![PathBuf::from("AGENTS.md")],
            "{}",
            cwd.display()
        );
        assert!(!instructions.text.contains("OUTSIDE") && !instructions.text.contains("PARENT"));
        assert_eq!(instructions.warnings.len(), 1);
        assert!(
            instructions.warnings[0].contains("is outside the project folder"),
            "{:?}",
            instructions.warnings
        );
    }
}

#[test]
fn a_missing_root_gives_a_warning_only() {
    let dir = project();
    let root = dir.path().join("missing");

    let instructions = load_instructions(&root, &root, DEFAULT_CAP_BYTES);

    assert_eq!(instructions.text, "");
    assert_eq!(instructions.warnings.len(), 1);
    assert!(instructions.warnings[0].starts_with("project instructions not loaded"));
}

#[cfg(unix)]
#[test]
fn a_symlink_leaving_the_root_is_skipped() {
    let dir = project();
    let root = dir.path().join("project");
    write(dir.path(), "secret.md", "SECRET");
    write(&root, "AGENTS.md", "root rules");
    fs::create_dir_all(root.join("sub")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.md"), root.join("sub/AGENTS.md")).unwrap();
    // The alias is not used instead: the folder does have an AGENTS.md.
    write(&root, "sub/CLAUDE.md", "alias");

    let instructions = load_instructions(&root, &root.join("sub"), DEFAULT_CAP_BYTES);

    assert_eq!(instructions.files, vec![PathBuf::from("AGENTS.md")]);
    assert!(!instructions.text.contains("SECRET") && !instructions.text.contains("alias"));
    assert_eq!(
        instructions.warnings,
        vec![
            "skipped sub/AGENTS.md: it is a symbolic link to a file outside the project folder"
                .to_owned()
        ]
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_inside_the_root_is_followed() {
    let dir = project();
    let root = dir.path().join("project");
    write(&root, "docs/agents.md", "shared rules");
    std::os::unix::fs::symlink(root.join("docs/agents.md"), root.join("AGENTS.md")).unwrap();

    let instructions = load_instructions(&root, &root, DEFAULT_CAP_BYTES);

    assert_eq!(
        instructions.text,
        "Instructions from AGENTS.md (the whole project):\n\nshared rules"
    );
}

#[test]
fn within_the_cap_nothing_is_cut() {
    let dir = project();
    let root = dir.path().join("project");
    write(&root, "AGENTS.md", "abc");
    let exact = "Instructions from AGENTS.md (the whole project):\n\nabc".len();

    let instructions = load_instructions(&root, &root, exact);

    assert!(!instructions.truncated);
    assert_eq!(instructions.text.len(), exact);
}

fn lines(prefix: &str, count: usize) -> String {
    (0..count)
        .map(|n| format!("{prefix} line {n:04}\n"))
        .collect()
}

#[test]
fn over_the_cap_the_large_file_is_cut_and_the_small_one_kept() {
    let dir = project();
    let root = dir.path().join("project");
    let big = lines("root", 400); // ~6.4 KB
    write(&root, "AGENTS.md", &big);
    write(&root, "app/AGENTS.md", "Use pnpm, never npm.\n");
    let cap = 2000;

    let instructions = load_instructions(&root, &root.join("app"), cap);

    assert!(instructions.truncated);
    assert!(
        instructions.text.len() <= cap,
        "{} > {cap}",
        instructions.text.len()
    );
    assert_eq!(
        instructions.files,
        vec![PathBuf::from("AGENTS.md"), PathBuf::from("app/AGENTS.md")]
    );
    // The deeper, small file is whole; the root's is cut at a line end, with a note.
    assert!(instructions.text.ends_with("Use pnpm, never npm."));
    assert!(instructions.text.contains("root line 0000\n"));
    let note = format!(
        "[AGENTS.md was cut to fit the instructions' size cap: {{shown}} of {} bytes shown. Read the file for the rest.]",
        big.len()
    );
    let (before_note, _) = instructions
        .text
        .split_once("\n\n[AGENTS.md was cut")
        .unwrap();
    assert!(before_note.ends_with(&format!("root line {:04}", before_note.lines().count() - 3)));
    let shown = before_note.len() - "Instructions from AGENTS.md (the whole project):\n\n".len();
    assert!(
        instructions
            .text
            .contains(&note.replace("{shown}", &shown.to_string()))
    );
    assert_eq!(instructions.warnings.len(), 1);
    assert!(instructions.warnings[0].starts_with("AGENTS.md was cut to fit"));
}

#[test]
fn two_large_files_share_the_cap() {
    let dir = project();
    let root = dir.path().join("project");
    write(&root, "AGENTS.md", &lines("root", 300));
    write(&root, "app/AGENTS.md", &lines("app", 300));
    let cap = 3000;

    let instructions = load_instructions(&root, &root.join("app"), cap);

    assert!(instructions.truncated);
    assert!(instructions.text.len() <= cap);
    assert_eq!(instructions.text.matches("was cut to fit").count(), 2);
    let root_lines = instructions.text.matches("root line").count();
    let app_lines = instructions.text.matches("app line").count();
    assert!(
        root_lines > 40 && app_lines > 40,
        "{root_lines} {app_lines}"
    );
}

#[test]
fn a_file_larger_than_the_cap_is_read_only_up_to_the_cap() {
    let dir = project();
    let root = dir.path().join("project");
    // Multi-byte characters, so the read limit falls inside one.
    write(&root, "AGENTS.md", &"é".repeat(50_000));

    let instructions = load_instructions(&root, &root, 1001);

    assert!(instructions.truncated);
    assert!(instructions.text.len() <= 1001);
    assert!(instructions.text.contains("of 100000 bytes shown"));
}

#[test]
fn a_cap_too_small_for_the_headers_leaves_out_the_shallowest_files() {
    let dir = project();
    let root = dir.path().join("project");
    write(&root, "AGENTS.md", "root");
    write(&root, "a/AGENTS.md", &"deeper ".repeat(50));

    let instructions = load_instructions(&root, &root.join("a"), 300);

    assert!(instructions.truncated);
    assert!(instructions.text.len() <= 300);
    assert_eq!(instructions.files, vec![PathBuf::from("a/AGENTS.md")]);
    assert!(instructions.warnings[0].starts_with("AGENTS.md was left out"));

    let nothing = load_instructions(&root, &root.join("a"), 10);
    assert_eq!(
        (
            nothing.text.as_str(),
            nothing.files.len(),
            nothing.truncated
        ),
        ("", 0, true)
    );
}

#[test]
fn fair_shares_give_small_texts_all_they_need() {
    assert_eq!(fair_shares(&[10, 100, 100], 110), vec![10, 50, 50]);
    assert_eq!(fair_shares(&[10, 20], 100), vec![10, 20]);
    assert_eq!(fair_shares(&[100, 100, 100], 100), vec![33, 33, 34]);
    assert_eq!(fair_shares(&[], 100), Vec::<usize>::new());
}

#[test]
fn cut_at_line_prefers_a_line_end() {
    assert_eq!(cut_at_line("one\ntwo\nthree", 10), "one\ntwo");
    assert_eq!(cut_at_line("short", 10), "short");
    assert_eq!(cut_at_line("a\nbcdefghijkl", 10), "a\nbcdefghi");
    assert_eq!(cut_at_line("ééé", 3), "é");
}

fn parts() -> PromptParts {
    PromptParts {
        project_root: "/home/me/project".to_owned(),
        working_folder: "/home/me/project/app".to_owned(),
        os: "linux".to_owned(),
        shell: "bash".to_owned(),
        date: "2026-05-14".to_owned(),
        is_git_repo: true,
        instructions: "Instructions from AGENTS.md (the whole project):\n\nRun `just test`."
            .to_owned(),
        skill_index: "- code-review: Review a change.".to_owned(),
        todos: "[x] read the code\n[~] fix the bug".to_owned(),
        tools: [
            "read",
            "write",
            "edit",
            "glob",
            "grep",
            "bash",
            "process",
            "todowrite",
            "task",
            "skill",
        ]
        .map(str::to_owned)
        .to_vec(),
    }
}

#[test]
fn the_system_prompt_has_every_part_in_order() {
    let prompt = system_prompt(&parts());

    let order = [
        "You are corvid",
        "# Tools",
        "# How to work",
        "# Approvals",
        "# Environment",
        "- Project root: /home/me/project\n",
        "- Working folder: /home/me/project/app\n",
        "- Operating system: linux\n",
        "- Shell: bash\n",
        "- Today's date: 2026-05-14\n",
        "- Git repository: yes",
        "# Project instructions",
        "Run `just test`.",
        "# Skills",
        "- code-review: Review a change.",
        "# Current todos\n[x] read the code\n[~] fix the bug\n",
    ];
    let mut from = 0;
    for part in order {
        let at = prompt[from..]
            .find(part)
            .unwrap_or_else(|| panic!("{part:?} missing or out of order in\n{prompt}"));
        from += at + part.len();
    }
    for tool in [
        "`read`",
        "`write`",
        "`edit`",
        "`glob`",
        "`grep`",
        "`bash`",
        "`process`",
        "`todowrite`",
        "`task`",
        "`skill`",
    ] {
        assert!(prompt.contains(tool), "{tool}");
    }
    assert!(prompt.ends_with("[~] fix the bug\n"));
}

#[test]
fn empty_parts_are_left_out_of_the_system_prompt() {
    let prompt = system_prompt(&PromptParts {
        working_folder: "/home/me/project".to_owned(),
        is_git_repo: false,
        instructions: String::new(),
        skill_index: " ".to_owned(),
        todos: String::new(),
        ..parts()
    });

    assert!(prompt.contains("- Working folder: the project root\n"));
    assert!(prompt.ends_with("- Git repository: no\n"));
    for heading in ["# Project instructions", "# Skills", "# Current todos"] {
        assert!(!prompt.contains(heading), "{heading}");
    }
}

#[test]
fn the_system_prompt_describes_only_the_tools_offered() {
    let prompt = system_prompt(&PromptParts {
        tools: ["read", "glob", "grep", "skill"]
            .map(str::to_owned)
            .to_vec(),
        ..parts()
    });
    for tool in ["`read`", "`glob`", "`grep`", "`skill`"] {
        assert!(prompt.contains(tool), "{tool} missing");
    }
    for tool in [
        "`write`",
        "`edit`",
        "`bash`",
        "`process`",
        "`todowrite`",
        "`task`",
    ] {
        assert!(
            !prompt.contains(tool),
            "{tool} listed but not offered:\n{prompt}"
        );
    }
}

#[test]
fn the_system_prompt_is_deterministic() {
    assert_eq!(system_prompt(&parts()), system_prompt(&parts()));
}
