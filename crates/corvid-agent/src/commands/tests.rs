use pretty_assertions::assert_eq;

use super::expand::{Piece, pieces, words};
use super::load::{gemini, markdown, split_tools};
use super::*;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn folders_give_namespaced_names_and_the_first_of_a_name_wins() {
    let project = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let root = project.path();
    write(
        root,
        ".corvid/commands/frontend/component.md",
        "Make a component.",
    );
    write(
        root,
        ".claude/commands/fix.md",
        "---\ndescription: fix it\n---\nFix $ARGUMENTS",
    );
    write(root, ".claude/commands/notes.txt", "not a command");
    write(
        root,
        ".claude/commands/skipped.toml",
        "prompt = \"claude reads no toml\"",
    );
    write(
        root,
        ".gemini/commands/git/commit.toml",
        "prompt = \"Commit {{args}}\"",
    );
    write(
        root,
        ".gemini/commands/ignored.md",
        "gemini reads no markdown",
    );
    write(user.path(), "fix.md", "the user's fix");
    write(user.path(), "mine.md", "# Mine\nDo mine.");
    write(root, ".corvid/commands/bad name.md", "x");

    let set = load_commands(root, Some(user.path()));
    let names: Vec<&str> = set.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["fix", "frontend:component", "git:commit", "mine"]);
    let fix = set.get("fix").unwrap();
    assert_eq!(fix.source, ".claude/commands/fix.md");
    assert_eq!(fix.description, "fix it");
    assert_eq!(set.get("mine").unwrap().description, "Mine");
    assert_eq!(set.get("git:commit").unwrap().syntax, Syntax::Gemini);
    assert_eq!(set.warnings.len(), 2, "{:?}", set.warnings);
    assert!(
        set.warnings[0].contains("bad name.md"),
        "{:?}",
        set.warnings
    );
    assert!(
        set.warnings[1].contains("/fix is already"),
        "{:?}",
        set.warnings
    );
}

#[test]
fn frontmatter_fields_are_read_as_claude_code_writes_them() {
    let command = markdown(
        "commit",
        "---\nallowed-tools: Bash(git add:*), Bash(git status:*), Read\nargument-hint: [message]\n\
         description: Create a git commit\nmodel: small\n---\nCommit: $ARGUMENTS\n",
    )
    .unwrap();
    assert_eq!(
        command.allowed_tools,
        ["Bash(git add:*)", "Bash(git status:*)", "Read"]
    );
    assert_eq!(command.argument_hint, "[message]");
    assert_eq!(command.model.as_deref(), Some("small"));
    assert_eq!(command.template, "Commit: $ARGUMENTS");
    let listed = markdown("x", "---\nallowed-tools:\n  - Read\n  - Grep\n---\nbody").unwrap();
    assert_eq!(listed.allowed_tools, ["Read", "Grep"]);
    assert!(markdown("x", "---\ndescription: never closed\n").is_err());
    assert_eq!(split_tools("Bash(a, b), Read"), ["Bash(a, b)", "Read"]);
    assert!(gemini("x", "description = \"no prompt\"").is_err());
}

fn text_of(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Text(text) => text.clone(),
            Piece::Shell(line) => format!("<sh {line}>"),
            Piece::File { path, .. } => format!("<file {path}>"),
        })
        .collect()
}

#[test]
fn arguments_words_files_and_command_lines() {
    let command = markdown(
        "x",
        "Fix #$1 in $2 ($ARGUMENTS), cost $5.00 and $10.\n!`git log -n 1 $1`\nSee @src/lib.rs, not a@b.c.",
    )
    .unwrap();
    let got = text_of(&pieces(&command, " 42 'the parser' "));
    assert_eq!(
        got,
        "Fix #42 in the parser (42 'the parser'), cost .00 and $10.\n<sh git log -n 1 '42'>\nSee <file src/lib.rs>, not a@b.c."
    );
    // Arguments in a command line are one quoted word each: they cannot add a command.
    let quoted = text_of(&pieces(&command, "x;rm -rf /"));
    assert!(quoted.contains("<sh git log -n 1 'x;rm'>"), "{quoted}");
    assert_eq!(words(r#"a "b c" 'd'"#), ["a", "b c", "d"]);
}

#[test]
fn arguments_without_a_placeholder_follow_the_prompt_and_gemini_has_its_own_syntax() {
    let plain = markdown("x", "Tidy the code.").unwrap();
    assert_eq!(text_of(&pieces(&plain, "src/")), "Tidy the code.\n\nsrc/");
    assert_eq!(text_of(&pieces(&plain, "")), "Tidy the code.");
    let toml = gemini(
        "x",
        "prompt = \"Review {{args}}: !{git diff {{args}}} and @{docs/a.md}, not $1 or @b\"",
    )
    .unwrap();
    assert_eq!(
        text_of(&pieces(&toml, "main")),
        "Review main: <sh git diff 'main'> and <file docs/a.md>, not $1 or @b"
    );
}

#[test]
fn a_user_dir_sits_beside_the_user_settings() {
    let mut config = crate::AgentConfig::new(PathBuf::from("/p"), "m");
    assert_eq!(user_dir_of(&config), None);
    config.user_settings = Some(PathBuf::from("/home/u/.config/corvid/settings.json"));
    assert_eq!(
        user_dir_of(&config),
        Some(PathBuf::from("/home/u/.config/corvid/commands"))
    );
}
