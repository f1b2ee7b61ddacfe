use std::fs;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn cargo_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/*\"]\n",
    );
    write(
        root,
        "crates/core/Cargo.toml",
        "[package]\nname = \"core\"\n",
    );
    write(
        root,
        "README.md",
        "<p align=\"center\">logo</p>\n\n# Corvid  #\n\nA gateway.\n",
    );
    write(root, ".gitignore", "target/\n*.log\n");
    write(root, "target/debug/x", "");
    write(root, "build.log", "");
    write(root, ".github/workflows/ci.yml", "on: push\n");
    write(root, ".github/workflows/notes.txt", "");
    write(root, "CLAUDE.md", "Use cargo.\n");
    fs::create_dir_all(root.join(".git")).unwrap();
    dir
}

#[test]
fn facts_detect_a_cargo_workspace() {
    let dir = cargo_project();

    let facts = project_facts(dir.path());

    assert_eq!(
        facts,
        ProjectFacts {
            entries: vec![
                ".github/".to_owned(),
                ".gitignore".to_owned(),
                "CLAUDE.md".to_owned(),
                "Cargo.toml".to_owned(),
                "README.md".to_owned(),
                "crates/".to_owned(),
            ],
            more_entries: 0,
            ecosystems: vec![Ecosystem {
                name: "Rust",
                manifest: "Cargo.toml".to_owned(),
                commands: vec![
                    "cargo build --workspace".to_owned(),
                    "cargo test --workspace".to_owned(),
                    "cargo clippy --workspace --all-targets -- -D warnings".to_owned(),
                    "cargo fmt --check".to_owned(),
                ],
            }],
            readme: Some("README.md".to_owned()),
            readme_heading: Some("Corvid".to_owned()),
            ci: vec![".github/workflows/ci.yml".to_owned()],
            guidance: vec!["CLAUDE.md".to_owned()],
            is_git_repo: true,
        }
    );
}

#[test]
fn facts_detect_node_python_go_and_make() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "package.json",
        r#"{"scripts": {"zz": "x", "test": "vitest", "build": "vite build"}}"#,
    );
    write(root, "pnpm-lock.yaml", "");
    write(root, "pyproject.toml", "[tool.ruff]\nline-length = 100\n");
    write(root, "uv.lock", "");
    write(root, "tests/test_x.py", "");
    write(root, "go.mod", "module x\n");
    write(
        root,
        "Makefile",
        "VERSION := 1\n.PHONY: all test\nall: build\nbuild test: deps\n\tgo build\n%.o: %.c\n",
    );
    write(root, "README", "Project\n=======\n");

    let facts = project_facts(root);

    let summary: Vec<(&str, String, Vec<String>)> = facts
        .ecosystems
        .iter()
        .map(|ecosystem| {
            (
                ecosystem.name,
                ecosystem.manifest.clone(),
                ecosystem.commands.clone(),
            )
        })
        .collect();
    let strings = |items: &[&str]| {
        items
            .iter()
            .map(|item| (*item).to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        summary,
        vec![
            (
                "Node.js",
                "package.json".to_owned(),
                strings(&[
                    "pnpm install",
                    "pnpm run build",
                    "pnpm run test",
                    "pnpm run zz"
                ])
            ),
            (
                "Python",
                "pyproject.toml".to_owned(),
                strings(&[
                    "uv sync",
                    "uv run pytest",
                    "uv run ruff check .",
                    "uv run ruff format --check ."
                ])
            ),
            (
                "Go",
                "go.mod".to_owned(),
                strings(&["go build ./...", "go test ./...", "go vet ./..."])
            ),
            (
                "Make",
                "Makefile".to_owned(),
                strings(&["make all", "make build", "make test"])
            ),
        ]
    );
    assert_eq!(facts.readme_heading.as_deref(), Some("Project"));
    assert!(!facts.is_git_repo);
}

#[test]
fn facts_of_an_empty_or_missing_folder() {
    let dir = tempfile::tempdir().unwrap();

    assert_eq!(project_facts(dir.path()), ProjectFacts::default());
    assert_eq!(
        project_facts(&dir.path().join("missing")),
        ProjectFacts::default()
    );
}

#[test]
fn many_entries_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    for n in 0..(MAX_ENTRIES + 5) {
        write(dir.path(), &format!("file{n:03}.txt"), "");
    }

    let facts = project_facts(dir.path());

    assert_eq!((facts.entries.len(), facts.more_entries), (MAX_ENTRIES, 5));
    assert!(init_prompt(None, &facts).contains("file059.txt … and 5 more\n"));
}

#[test]
fn first_heading_skips_code_and_html() {
    assert_eq!(
        first_heading("```\n# not this\n```\n## Real title ##\n"),
        Some("Real title".to_owned())
    );
    assert_eq!(
        first_heading("#hashtag\nTitle\n-----\n"),
        Some("Title".to_owned())
    );
    assert_eq!(first_heading("no headings here\n"), None);
}

#[test]
fn the_prompt_asks_to_write_agents_md_from_the_facts() {
    let dir = cargo_project();
    let facts = project_facts(dir.path());

    let prompt = init_prompt(None, &facts);

    assert!(prompt.starts_with("Create AGENTS.md at the project root"));
    for expected in [
        "Look before you write",
        "how to run a single test",
        "Do not invent anything",
        "The project also has CLAUDE.md: read them and carry over what belongs in AGENTS.md.",
        "Write the file with the `write` tool",
        "- Top level: .github/, .gitignore, CLAUDE.md, Cargo.toml, README.md, crates/\n",
        "- Git repository: yes\n",
        "- Rust (Cargo.toml): `cargo build --workspace`, `cargo test --workspace`, ",
        "- README: README.md, titled \"Corvid\"\n",
        "- CI: .github/workflows/ci.yml\n",
    ] {
        assert!(
            prompt.contains(expected),
            "{expected:?} missing from\n{prompt}"
        );
    }
    assert!(!prompt.contains("current AGENTS.md"));
}

#[test]
fn the_prompt_quotes_existing_content_to_improve() {
    let existing = "# Agents\n\nRun `cargo test`.\n\n```sh\ncargo fmt\n```\n";

    let prompt = init_prompt(Some(existing), &ProjectFacts::default());

    assert!(prompt.starts_with("Improve the project's AGENTS.md"));
    assert!(prompt.contains("Keep what is still right, fix what is wrong or out of date"));
    assert!(prompt.contains("Write the file with the `edit` tool"));
    assert!(prompt.ends_with(
        "## The current AGENTS.md\n\n````markdown\n# Agents\n\nRun `cargo test`.\n\n```sh\ncargo fmt\n```\n````\n"
    ));
    assert!(prompt.contains("- No build manifest recognised at the top level.\n- No README.\n"));
}

#[test]
fn a_blank_existing_file_counts_as_none() {
    let prompt = init_prompt(Some("  \n"), &ProjectFacts::default());

    assert!(prompt.starts_with("Create AGENTS.md"));
}

#[test]
fn a_long_existing_file_is_cut() {
    let existing = "x".repeat(MAX_EXISTING + 10);

    let prompt = init_prompt(Some(&existing), &ProjectFacts::default());

    assert!(prompt.ends_with(&format!(
        "(cut after {MAX_EXISTING} of {} bytes; read AGENTS.md for the rest)\n",
        MAX_EXISTING + 10
    )));
}

#[test]
fn existing_agents_md_is_read_inside_the_project_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    write(&root, "AGENTS.md", "rules");
    assert_eq!(existing_agents_md(&root).as_deref(), Some("rules"));

    #[cfg(unix)]
    {
        write(dir.path(), "outside.md", "SECRET");
        fs::remove_file(root.join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside.md"), root.join("AGENTS.md")).unwrap();
        assert_eq!(existing_agents_md(&root), None);
    }
}
