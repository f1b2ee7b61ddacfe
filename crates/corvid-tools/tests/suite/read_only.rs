//! Read-only commands (the `read-only` policy and plan mode) with the real sandbox helper:
//! reading, listing, searching and `git status` work; nothing can be written, not in the
//! project, not in the temp folders. Skipped, with the reason printed, where the kernel has no
//! Landlock.

use std::path::PathBuf;

use corvid_test_support::scratch::outside_temp;
use corvid_tools::{
    Cancellation, Confinement, Sandbox, SandboxProbe, ToolContext, ToolOutput, ToolRegistry,
    Workspace,
};
use serde_json::{Value, json};

const HELPER: &str = env!("CARGO_BIN_EXE_corvid-sandbox");

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    tools: ToolRegistry,
}

/// A project with `notes.txt` and a git repository, under the real sandbox; `None` (after
/// saying why) without Landlock.
fn project() -> Option<Project> {
    let probe = SandboxProbe::detect();
    if probe.landlock_abi.is_none() {
        eprintln!("SKIPPED: this kernel has no Landlock, so there is no sandbox to test");
        return None;
    }
    let dir = outside_temp(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap().join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("notes.txt"), "one\n").unwrap();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&root)
        .status();
    assert!(git.is_ok_and(|status| status.success()));
    let sandbox = Sandbox::with_probe(HELPER, Vec::new(), None, probe);
    let context = ToolContext::new(Workspace::new(&root).unwrap(), root.join("../logs"))
        .with_sandbox(sandbox);
    Some(Project {
        _dir: dir,
        root,
        tools: ToolRegistry::new(context),
    })
}

impl Project {
    /// Runs `bash` with `arguments` read-only; `None` when the plan could not be confined.
    async fn read_only(&self, arguments: Value) -> Option<ToolOutput> {
        let mut prepared = self.tools.prepare("bash", arguments).await.unwrap();
        if !prepared.plan.confine_read_only() {
            return None;
        }
        Some(
            self.tools
                .apply(prepared.plan, Cancellation::never())
                .await
                .unwrap(),
        )
    }

    async fn run(&self, command: &str) -> ToolOutput {
        self.read_only(json!({ "command": command })).await.unwrap()
    }
}

#[tokio::test]
async fn reads_listings_searches_and_git_status_run() {
    let Some(project) = project() else { return };
    let output = project
        .run("ls && cat notes.txt && grep -n one notes.txt && git status --short && echo fine > /dev/null && echo done")
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(output.text.contains("notes.txt"), "{}", output.text);
    assert!(output.text.contains("1:one"), "{}", output.text);
    assert!(output.text.contains("done"), "{}", output.text);
}

#[tokio::test]
async fn nothing_can_be_written_not_even_in_the_temp_folders() {
    let Some(project) = project() else { return };
    for command in [
        "touch x",
        "echo two > notes.txt",
        "echo more >> notes.txt",
        "rm notes.txt",
        "mkdir sub",
        "git add notes.txt",
        "echo t > /tmp/corvid-read-only-probe",
        "mktemp",
    ] {
        let output = project.run(command).await;
        assert!(output.is_error, "`{command}` must fail: {}", output.text);
        assert!(
            output
                .text
                .contains("[corvid sandbox] The session is read-only"),
            "the note says why and that no widening helps: {}",
            output.text
        );
    }
    assert!(!project.root.join("x").exists());
    assert!(!project.root.join("sub").exists());
    assert!(!PathBuf::from("/tmp/corvid-read-only-probe").exists());
    assert_eq!(
        std::fs::read_to_string(project.root.join("notes.txt")).unwrap(),
        "one\n"
    );
}

#[tokio::test]
async fn background_commands_are_read_only_too() {
    let Some(project) = project() else { return };
    let output = project
        .read_only(json!({ "command": "touch background-made", "background": true }))
        .await
        .unwrap();
    assert!(!output.is_error, "{}", output.text);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!project.root.join("background-made").exists());
}

#[tokio::test]
async fn a_widened_command_cannot_be_made_read_only() {
    let Some(project) = project() else { return };
    let mut prepared = project
        .tools
        .prepare(
            "bash",
            json!({ "command": "ls", "sandbox": { "network": true } }),
        )
        .await
        .unwrap();
    assert!(matches!(
        prepared.plan.confinement(),
        Some(Confinement::Widened(_))
    ));
    assert!(!prepared.plan.confine_read_only());
}

#[tokio::test]
async fn without_a_kernel_sandbox_no_command_is_made_read_only() {
    let dir = tempfile::tempdir().unwrap();
    for sandbox in [
        Sandbox::off(),
        Sandbox::with_probe(
            HELPER,
            Vec::new(),
            None,
            SandboxProbe {
                landlock_abi: None,
                seccomp: false,
                namespaces: false,
            },
        ),
    ] {
        let context =
            ToolContext::new(Workspace::new(dir.path()).unwrap(), dir.path().join("logs"))
                .with_sandbox(sandbox);
        let tools = ToolRegistry::new(context);
        let mut prepared = tools
            .prepare("bash", json!({ "command": "touch x" }))
            .await
            .unwrap();
        assert!(!prepared.plan.confine_read_only());
    }
    assert!(!dir.path().join("x").exists());
}
