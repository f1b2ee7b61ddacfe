use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn write_skill(root: &Path, folder: &str, text: &str) {
    let dir = root.join(SKILLS_DIR).join(folder);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(SKILL_FILE), text).unwrap();
}

fn builtin_names() -> Vec<String> {
    vec![
        "authoring-mcp".to_owned(),
        "authoring-skills".to_owned(),
        "authoring-tools".to_owned(),
        "code-review".to_owned(),
        "write-tests".to_owned(),
    ]
}

#[test]
fn every_builtin_parses_and_says_something_real() {
    let set = SkillSet::builtin();

    assert_eq!(set.warnings, Vec::<String>::new());
    assert_eq!(set.names(), builtin_names());
    for skill in &set.skills {
        assert!(skill.builtin && skill.path.is_none(), "{}", skill.name);
        assert!(skill.description.contains("Use when"), "{}", skill.name);
        assert!(skill.body.lines().count() > 15, "{}", skill.name);
        assert!(skill.body.starts_with("# "), "{}", skill.name);
    }
}

#[test]
fn a_project_without_skills_has_the_builtins() {
    let dir = tempfile::tempdir().unwrap();

    assert_eq!(load_skills(dir.path()), SkillSet::builtin());
}

#[test]
fn a_valid_project_skill_is_loaded() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(
        dir.path(),
        "deploy-staging",
        "---\n\
         # a comment\n\
         name: deploy-staging\n\
         description: >-\n  Deploy the branch to staging\n  and check it.\n\
         license: MIT\n\
         metadata:\n  author: me\n  version: \"1\"\n\
         allowed-tools: [bash, read]\n\
         ---\n\n# Deploy\n\nRun `scripts/deploy.sh`.\n",
    );

    let set = load_skills(dir.path());

    assert_eq!(set.warnings, Vec::<String>::new());
    assert_eq!(
        set.get("deploy-staging"),
        Some(&Skill {
            name: "deploy-staging".to_owned(),
            description: "Deploy the branch to staging and check it.".to_owned(),
            body: "# Deploy\n\nRun `scripts/deploy.sh`.".to_owned(),
            path: Some(PathBuf::from(".corvid/skills/deploy-staging/SKILL.md")),
            builtin: false,
        })
    );
    assert_eq!(set.skills.len(), 6);
}

#[test]
fn invalid_skills_are_skipped_with_a_warning_naming_file_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_skill(
        root,
        "no-description",
        "---\nname: no-description\n---\nbody\n",
    );
    write_skill(
        root,
        "empty-description",
        "---\nname: empty-description\ndescription: \"  \"\n---\nbody\n",
    );
    write_skill(
        root,
        "wrong-folder",
        "---\nname: other-name\ndescription: d\n---\nbody\n",
    );
    write_skill(
        root,
        "unterminated",
        "---\nname: unterminated\ndescription: d\nbody without a closing line\n",
    );
    write_skill(root, "no-frontmatter", "# Just markdown\n");
    write_skill(
        root,
        "bad-line",
        "---\nname: bad-line\ndescription: d\nthis is not yaml\n---\nbody\n",
    );
    write_skill(root, "Upper", "---\nname: Upper\ndescription: d\n---\n");
    write_skill(
        root,
        "listed-name",
        "---\nname:\n  - a\ndescription: d\n---\n",
    );
    write_skill(
        root,
        "good",
        "---\nname: good\ndescription: 'It''s fine'\n---\nGood body\n",
    );
    fs::create_dir_all(root.join(SKILLS_DIR).join("no-file")).unwrap();
    fs::write(
        root.join(SKILLS_DIR).join("loose.md"),
        "---\nname: loose\n---\n",
    )
    .unwrap();
    fs::write(root.join(SKILLS_DIR).join(".DS_Store"), "").unwrap();

    let set = load_skills(root);

    assert_eq!(
        set.warnings,
        vec![
            "skipped the skill .corvid/skills/Upper/SKILL.md: its name `Upper` must be lowercase letters, digits and hyphens (not at either end)",
            "skipped the skill .corvid/skills/bad-line/SKILL.md: line 4: expected `key: value`, found `this is not yaml`",
            "skipped the skill .corvid/skills/empty-description/SKILL.md: the frontmatter has no `description` (say what the skill does and when to use it)",
            "skipped the skill .corvid/skills/listed-name/SKILL.md: line 2: `name` must be text, not a list or mapping",
            "skipped .corvid/skills/loose.md: a skill is a folder holding a SKILL.md (.corvid/skills/<name>/SKILL.md)",
            "skipped the skill .corvid/skills/no-description/SKILL.md: the frontmatter has no `description` (say what the skill does and when to use it)",
            "skipped the skill .corvid/skills/no-file/SKILL.md: the folder has no SKILL.md",
            "skipped the skill .corvid/skills/no-frontmatter/SKILL.md: it does not start with a `---` line opening the YAML frontmatter",
            "skipped the skill .corvid/skills/unterminated/SKILL.md: the frontmatter opened on line 1 is never closed by a `---` line",
            "skipped the skill .corvid/skills/wrong-folder/SKILL.md: its name `other-name` does not match its folder `wrong-folder`",
        ]
    );
    let mut names = builtin_names();
    names.insert(4, "good".to_owned());
    assert_eq!(set.names(), names);
    assert_eq!(
        set.get("good").map(|skill| skill.description.as_str()),
        Some("It's fine")
    );
}

#[test]
fn a_description_over_the_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(MAX_DESCRIPTION_CHARS + 1);
    write_skill(
        dir.path(),
        "long",
        &format!("---\nname: long\ndescription: {long}\n---\n"),
    );

    let set = load_skills(dir.path());

    assert_eq!(
        set.warnings,
        vec![
            "skipped the skill .corvid/skills/long/SKILL.md: its description is 1025 characters long; the limit is 1024"
        ]
    );
}

#[test]
fn a_project_skill_overrides_a_builtin_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(
        dir.path(),
        "code-review",
        "---\nname: code-review\ndescription: Our review rules.\n---\nCheck the changelog.\n",
    );

    let set = load_skills(dir.path());

    assert_eq!(
        set.warnings,
        vec![
            "the project skill .corvid/skills/code-review/SKILL.md replaces the built-in skill `code-review`"
        ]
    );
    assert_eq!(set.names(), builtin_names());
    let skill = set.get("code-review").unwrap();
    assert_eq!(
        (skill.builtin, skill.body.as_str()),
        (false, "Check the changelog.")
    );
}

#[cfg(unix)]
#[test]
fn a_skill_linked_from_outside_the_project_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    write_skill(
        dir.path(),
        "outside",
        "---\nname: outside\ndescription: d\n---\n",
    );
    fs::create_dir_all(root.join(SKILLS_DIR).join("outside")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join(SKILLS_DIR).join("outside").join(SKILL_FILE),
        root.join(SKILLS_DIR).join("outside").join(SKILL_FILE),
    )
    .unwrap();

    let set = load_skills(&root);

    assert_eq!(
        set.warnings,
        vec![
            "skipped the skill .corvid/skills/outside/SKILL.md: it is a symbolic link to a file outside the project folder"
        ]
    );
    assert!(set.get("outside").is_none());
}

#[test]
fn the_index_lists_names_and_descriptions_only() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(
        dir.path(),
        "deploy",
        "---\nname: deploy\ndescription: |\n  Deploy to staging.\n  Use when asked to deploy.\n---\nSECRET BODY STEPS\n",
    );

    let set = load_skills(dir.path());
    let index = set.index();

    assert!(!index.contains("SECRET BODY"));
    for skill in &set.skills {
        assert!(!index.contains(&skill.body), "{}", skill.name);
    }
    let lines: Vec<&str> = index.lines().collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(
        lines[3],
        "- code-review: Review a change (the working tree, a commit, a branch or named files) for bugs, security problems, missing tests and unclear code, and report findings by severity with file and line references. Use when asked to review, check or critique code."
    );
    assert_eq!(
        lines[4],
        "- deploy: Deploy to staging. Use when asked to deploy."
    );
    assert!(lines.iter().all(|line| line.starts_with("- ")));
    assert_eq!(SkillSet::default().index(), "");
}

#[test]
fn load_tool_returns_the_body_with_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(
        dir.path(),
        "deploy",
        "---\nname: deploy\ndescription: d\n---\nRun `scripts/go.sh`.\n",
    );
    let set = load_skills(dir.path());

    assert_eq!(
        set.load_tool(json!({"name": "deploy"}))
            .map_err(|error| error.to_string()),
        Ok("Skill `deploy` from .corvid/skills/deploy/SKILL.md. Paths it mentions are relative to its folder \
            .corvid/skills/deploy/; open those files with the `read` tool (for example `.corvid/skills/deploy/<file>`).\
            \n\nRun `scripts/go.sh`."
            .to_owned())
    );
    let builtin = set.load_tool(json!({"name": " write-tests "})).unwrap();
    assert!(builtin.starts_with("Skill `write-tests` (built in).\n\n# Writing tests\n"));
}

#[test]
fn load_tool_errors_list_the_available_skills() {
    let set = SkillSet::builtin();
    let available = "Available skills: authoring-mcp, authoring-skills, authoring-tools, code-review, write-tests.";

    assert_eq!(
        set.load_tool(json!({"name": "deploy"}))
            .map_err(|error| error.to_string()),
        Err(format!("There is no skill named `deploy`. {available}"))
    );
    for arguments in [
        json!({}),
        json!({"name": ""}),
        json!({"name": 3}),
        json!(null),
    ] {
        assert_eq!(
            set.load_tool(arguments.clone())
                .map_err(|error| error.to_string()),
            Err(format!(
                "`name` is required: the skill to load, as a string. {available}"
            )),
            "{arguments}"
        );
    }
    assert_eq!(
        SkillSet::default()
            .load_tool(json!({"name": "x"}))
            .map_err(|error| error.to_string()),
        Err("There is no skill named `x`. No skills are available.".to_owned())
    );
}

#[test]
fn the_tool_spec_takes_a_name() {
    let tool = SkillSet::builtin().tool();

    assert_eq!(tool.name, "skill");
    assert_eq!(
        tool.parameters,
        json!({
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The skill's name, exactly as listed"}},
            "required": ["name"],
            "additionalProperties": false
        })
    );
    assert!(tool.description.unwrap().ends_with(
        "Available: authoring-mcp, authoring-skills, authoring-tools, code-review, write-tests."
    ));
}
