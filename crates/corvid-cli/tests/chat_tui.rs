//! `corvid chat` in a real pseudo-terminal (tmux, on a private socket), the real binary against
//! a scripted model on loopback: every way to exit ends the process within a second with the
//! terminal restored; a message typed during a turn is queued and sent after it; Ctrl-C at an
//! approval cancels it and the next line is a new message; history survives a restart; a
//! paste is one message; a pasted image path is an attachment; `/mcp` lists the servers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use corvid_test_support::{MockUpstream, Reply};
use serde_json::{Value, json};

mod common;
use common::pane::{EXITED, Pane, Setup};
use common::{CHAT, chunk, reply_with_usage, text, usage_chunk};

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "some notes\n").unwrap();
    dir
}

fn last_user_message(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .map(|message| message["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_way_to_exit_ends_the_process_within_a_second() {
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    for (keys, text) in [
        (&["C-c", "C-c"][..], None),
        (&["C-d"][..], None),
        (&["Enter"][..], Some("/quit")),
    ] {
        let project = project();
        let pane =
            tokio::task::block_in_place(|| Pane::start(&upstream, home.path(), project.path(), 80));
        tokio::task::block_in_place(|| {
            if let Some(text) = text {
                pane.type_text(text);
            }
            if keys == ["C-c", "C-c"] {
                pane.keys(&["C-c"]);
                pane.wait_for("Ctrl-C again to exit", Duration::from_secs(1));
                assert!(!pane.screen().contains(EXITED), "one Ctrl-C only hints");
                pane.keys(&["C-c"]);
            } else {
                pane.keys(keys);
            }
            pane.assert_exits();
        });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_typed_during_a_turn_is_queued_and_sent_after_it() {
    let upstream = MockUpstream::start().await;
    let (feed, held) = Reply::fed();
    upstream.enqueue(CHAT, held);
    upstream.enqueue(CHAT, text("Second answer."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let pane =
        tokio::task::block_in_place(|| Pane::start(&upstream, home.path(), project.path(), 80));
    tokio::task::block_in_place(|| {
        pane.type_text("first question");
        pane.keys(&["Enter"]);
        pane.wait_for("working", Duration::from_secs(5));
        pane.type_text("second question");
        pane.keys(&["Enter"]);
        pane.wait_for("queued: second question", Duration::from_secs(2));
    });
    assert_eq!(
        upstream.requests().len(),
        1,
        "nothing sent while the turn runs"
    );
    feed.event(&chunk(
        json!({"role": "assistant", "content": "First answer."}),
        Value::Null,
    ));
    feed.event(&chunk(json!({}), json!("stop")));
    feed.event(&usage_chunk());
    feed.event("[DONE]");
    drop(feed);
    tokio::task::block_in_place(|| {
        let screen = pane.wait_for("Second answer.", Duration::from_secs(10));
        assert!(screen.contains("First answer."), "{screen}");
        assert!(!screen.contains("queued:"), "{screen}");
    });
    let requests = upstream.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(last_user_message(&requests[1].json()), "second question");
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_at_an_approval_cancels_it_and_the_next_line_is_a_new_message() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        reply_with_usage(vec![
            chunk(json!({"tool_calls": [{"index": 0, "id": "b1", "type": "function", "function": {"name": "bash", "arguments": r#"{"command":"touch marker"}"#}}]}), Value::Null),
            chunk(json!({}), json!("tool_calls")),
        ]),
    );
    upstream.enqueue(
        CHAT,
        text("## A new topic\n\nFine. **Nothing** was run:\n\n- `marker` does not exist\n- ask again to create it"),
    );
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let pane =
        tokio::task::block_in_place(|| Pane::start(&upstream, home.path(), project.path(), 80));
    tokio::task::block_in_place(|| {
        pane.type_text("make a marker");
        pane.keys(&["Enter"]);
        pane.wait_for("? allow: Run touch marker", Duration::from_secs(10));
        // The prompt line is drawn just after the proposal reaches the scrollback.
        pane.wait_for("1 yes · 2 always · 3 no", Duration::from_secs(1));
        pane.keys(&["C-c"]);
        pane.wait_for("interrupted", Duration::from_secs(5));
        pane.type_text("n");
        pane.keys(&["Enter"]);
        let screen = pane.wait_for("─ done", Duration::from_secs(10));
        // The screen (`--nocapture` shows it).
        println!("{screen}");
    });
    assert!(!project.path().join("marker").exists());
    let requests = upstream.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        last_user_message(&requests[1].json()),
        "n",
        "the line was a new message"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn history_is_kept_across_runs_and_a_paste_is_one_message() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, text("Pasted."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let pane =
        tokio::task::block_in_place(|| Pane::start(&upstream, home.path(), project.path(), 80));
    tokio::task::block_in_place(|| {
        pane.tmux(&["set-buffer", "line one\nline two"]);
        pane.tmux(&["paste-buffer", "-p", "-t", "0"]);
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            upstream.requests().len(),
            0,
            "a paste is not sent by itself"
        );
        pane.keys(&["Enter"]);
        pane.wait_for("Pasted.", Duration::from_secs(10));
        pane.keys(&["C-d"]);
        pane.assert_exits();
    });
    assert_eq!(
        last_user_message(&upstream.requests()[0].json()),
        "line one\nline two"
    );
    drop(pane);
    let pane =
        tokio::task::block_in_place(|| Pane::start(&upstream, home.path(), project.path(), 80));
    tokio::task::block_in_place(|| {
        pane.keys(&["Up"]);
        let screen = pane.wait_for("› line one", Duration::from_secs(2));
        assert!(screen.contains("  line two"), "{screen}");
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_image_path_becomes_a_chip_and_the_image_reaches_the_model() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, text("A tiny picture."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let shot = project.path().join("shot one.png");
    std::fs::write(&shot, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let pane =
        tokio::task::block_in_place(|| Pane::start(&upstream, home.path(), project.path(), 80));
    tokio::task::block_in_place(|| {
        // As a file manager's drag pastes it: quoted.
        pane.tmux(&["set-buffer", &format!("'{}'", shot.display())]);
        pane.tmux(&["paste-buffer", "-p", "-t", "0"]);
        let screen = pane.wait_for("[image: shot one.png]", Duration::from_secs(5));
        assert!(!screen.contains("› '"), "the path is not typed: {screen}");
        pane.type_text("what is this?");
        pane.keys(&["Enter"]);
        pane.wait_for("A tiny picture.", Duration::from_secs(10));
        pane.keys(&["C-d"]);
        pane.assert_exits();
    });
    let request = upstream.requests()[0].json();
    let user = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .unwrap()
        .clone();
    assert_eq!(user["content"][0]["text"], "what is this?", "{user}");
    assert_eq!(
        user["content"][1]["image_url"]["url"], "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==",
        "{user}"
    );
}

#[tokio::test]
async fn without_a_terminal_chat_reads_lines_and_prints_plain_text() {
    use tokio::io::AsyncWriteExt;
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, text("# Done\n\nAll **good**."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let mut child = common::corvid_with_upstream(&upstream, home.path())
        .args(["chat", "--model", "grok", "--project"])
        .arg(project.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"check it\n").await.unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("chat ends at the end of its input")
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("› check it\n"), "{stdout}");
    assert!(stdout.contains("Done\n\nAll good."), "{stdout}");
    assert!(stdout.contains("─ done · 1 step"), "{stdout}");
    assert!(!stdout.contains('\u{1b}'), "no escape codes: {stdout:?}");
    assert!(
        !stdout.contains("Ctrl-C"),
        "no key hints without keys: {stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn alt_enter_adds_a_line_instead_of_sending() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, text("Two lines."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let pane =
        tokio::task::block_in_place(|| Pane::start(&upstream, home.path(), project.path(), 80));
    tokio::task::block_in_place(|| {
        pane.type_text("first");
        pane.keys(&["M-Enter"]);
        pane.type_text("second");
        assert_eq!(upstream.requests().len(), 0);
        pane.keys(&["Enter"]);
        pane.wait_for("Two lines.", Duration::from_secs(10));
    });
    assert_eq!(
        last_user_message(&upstream.requests()[0].json()),
        "first\nsecond"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_interrupts_the_turn_and_the_chat_goes_on() {
    let upstream = MockUpstream::start().await;
    let (feed, held) = Reply::fed();
    upstream.enqueue(CHAT, held);
    upstream.enqueue(CHAT, text("Still here."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let pane =
        tokio::task::block_in_place(|| Pane::start(&upstream, home.path(), project.path(), 80));
    tokio::task::block_in_place(|| {
        pane.type_text("a long job");
        pane.keys(&["Enter"]);
        pane.wait_for("working", Duration::from_secs(5));
        pane.keys(&["Escape"]);
        pane.wait_for("─ interrupted", Duration::from_secs(5));
        pane.type_text("again");
        pane.keys(&["Enter"]);
        pane.wait_for("Still here.", Duration::from_secs(10));
    });
    drop(feed);
}

/// The rows of a capture without the blank ones tmux pads it with at the end.
fn rows(screen: &str) -> Vec<&str> {
    let mut rows: Vec<&str> = screen.lines().collect();
    while rows.last().is_some_and(|row| row.trim().is_empty()) {
        rows.pop();
    }
    rows
}

#[tokio::test(flavor = "multi_thread")]
async fn the_input_area_is_as_tall_as_it_needs_and_the_scrollback_keeps_everything() {
    let upstream = MockUpstream::start().await;
    let answer: String = (1..=30).map(|n| format!("answer line {n}\n\n")).collect();
    upstream.enqueue(CHAT, text(&answer));
    upstream.enqueue(CHAT, text("Short."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let setup = Setup {
        width: 60,
        height: 14,
        ..Setup::default()
    };
    let pane =
        tokio::task::block_in_place(|| Pane::open(&upstream, home.path(), project.path(), &setup));
    tokio::task::block_in_place(|| {
        pane.type_text("a long answer please");
        pane.keys(&["Enter"]);
        pane.wait_for("─ done", Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(300));
        // The screen is full: the status line is on the last row, right under the input —
        // no blank rows below it.
        let screen = pane.screen();
        let shown: Vec<&str> = screen.lines().collect();
        assert_eq!(shown.len(), 14, "{screen}");
        assert!(shown[13].starts_with("ready"), "{screen}");
        assert!(shown[11].starts_with('›'), "{screen}");
        assert!(shown[10].contains("─ done"), "{screen}");
        // A long input grows the area; the conversation above moves up, nothing is lost.
        pane.tmux(&["set-buffer", "one\ntwo\nthree\nfour\nfive\nsix"]);
        pane.tmux(&["paste-buffer", "-p", "-t", "0"]);
        let screen = pane.wait_for("  six", Duration::from_secs(2));
        let shown: Vec<&str> = screen.lines().collect();
        assert!(shown[13].starts_with("ready"), "{screen}");
        assert!(shown[6].starts_with("› one"), "{screen}");
        assert!(shown[11].starts_with("  six"), "{screen}");
        pane.keys(&["Enter"]);
        pane.wait_for("Short.", Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(300));
        // Once sent, the input is one row again and the message fills the rows it left.
        let screen = pane.screen();
        let shown = rows(&screen);
        assert!(shown.last().unwrap().starts_with("ready"), "{screen}");
        assert_eq!(shown.len(), 14, "{screen}");
        // Every line of the long answer is in the scrollback once, in order.
        let history = pane.history();
        let mut last = 0;
        for n in 1..=30 {
            let line = format!("answer line {n}");
            let found: Vec<usize> = history
                .lines()
                .enumerate()
                .filter(|(_, row)| row.trim_end() == line)
                .map(|(index, _)| index)
                .collect();
            assert_eq!(found.len(), 1, "{line} once:\n{history}");
            assert!(found[0] > last, "{line} in order:\n{history}");
            last = found[0];
        }
        // The old input area left nothing behind: no prompt rows among the conversation.
        let prompts = history.lines().filter(|row| row.starts_with("› ")).count();
        assert!(prompts >= 2, "{history}");
        assert_eq!(
            history
                .lines()
                .filter(|row| row.starts_with("ready"))
                .count(),
            1,
            "one status line, at the bottom:\n{history}"
        );
        // A taller window pulls lines back from the scrollback; the area follows the text,
        // and no second input row is left behind.
        pane.tmux(&["resize-window", "-t", "0", "-x", "60", "-y", "20"]);
        std::thread::sleep(Duration::from_millis(600));
        let screen = pane.screen();
        let shown: Vec<&str> = screen.lines().collect();
        assert_eq!(shown.len(), 20, "{screen}");
        assert!(shown[19].starts_with("ready"), "{screen}");
        assert!(shown[17].starts_with('›'), "{screen}");
        assert!(shown[16].contains("─ done"), "{screen}");
        assert_eq!(
            shown.iter().filter(|row| row.trim_end() == "›").count(),
            1,
            "{screen}"
        );
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panic_restores_the_terminal_and_shows_the_panic() {
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    let project = project();
    // The panic key exists in debug builds only (the tests' build).
    let setup = Setup {
        env: "CORVID_TUI_PANIC_KEY=%",
        after: "cat -v",
        ..Setup::default()
    };
    let pane =
        tokio::task::block_in_place(|| Pane::open(&upstream, home.path(), project.path(), &setup));
    tokio::task::block_in_place(|| {
        pane.type_text("%");
        let screen = pane.wait_for(EXITED, Duration::from_secs(2));
        // Raw mode is off (canonical input, echo back on) and the panic was printed.
        assert!(
            screen.contains(&format!("{EXITED} 101 icanon echo")),
            "{screen}"
        );
        assert!(screen.contains("asked to panic"), "{screen}");
        // The cursor is visible again.
        assert_eq!(
            pane.tmux(&["display-message", "-p", "-t", "0", "#{cursor_flag}"])
                .trim(),
            "1"
        );
        // Bracketed paste is off: a paste reaches the next program without its markers.
        pane.tmux(&["set-buffer", "pasted-after"]);
        pane.tmux(&["paste-buffer", "-p", "-t", "0"]);
        pane.keys(&["Enter"]);
        let screen = pane.wait_for("pasted-after", Duration::from_secs(2));
        assert!(!screen.contains("[200~"), "{screen}");
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn shift_enter_where_the_terminal_reports_it_and_alt_enter_add_lines() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, text("Three lines."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    // tmux reports Shift-Enter (as CSI 13;2u) with extended keys on.
    let setup = Setup {
        config: "set -s extended-keys always\n",
        ..Setup::default()
    };
    let pane =
        tokio::task::block_in_place(|| Pane::open(&upstream, home.path(), project.path(), &setup));
    tokio::task::block_in_place(|| {
        pane.type_text("first");
        pane.keys(&["S-Enter"]);
        pane.type_text("second");
        pane.keys(&["M-Enter"]);
        pane.type_text("third");
        let screen = pane.wait_for("  third", Duration::from_secs(2));
        assert!(screen.contains("› first\n  second\n"), "{screen}");
        assert_eq!(upstream.requests().len(), 0, "nothing sent yet");
        pane.keys(&["Enter"]);
        pane.wait_for("Three lines.", Duration::from_secs(10));
    });
    assert_eq!(
        last_user_message(&upstream.requests()[0].json()),
        "first\nsecond\nthird"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_mcp_shows_each_server_with_its_state_and_tools() {
    let Some(python) = corvid_test_support::installed::mcp_python() else {
        return;
    };
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/fixture_server.py");
    // One server the user configured (starts), one the project brings (waits for trust).
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[mcp_servers.fixture]\ncommand = {:?}\nargs = [{:?}, \"serve\"]\ndisabled_tools = [\"crash\"]\n",
            python.display().to_string(),
            fixture.display().to_string()
        ),
    )
    .unwrap();
    std::fs::create_dir(project.path().join(".corvid")).unwrap();
    std::fs::write(
        project.path().join(".corvid/mcp.json"),
        serde_json::json!({"mcpServers": {"repo-tools": {
            "command": python, "args": [fixture, "serve"]
        }}})
        .to_string(),
    )
    .unwrap();
    let pane = Pane::start(&upstream, home.path(), project.path(), 160);
    // Asked again until the server is up (it starts in the background).
    let listed_until = |needle: &str| {
        let start = Instant::now();
        loop {
            pane.type_text("/mcp");
            pane.keys(&["Enter"]);
            std::thread::sleep(Duration::from_millis(300));
            let screen = pane.screen();
            if screen.contains(needle) || start.elapsed() > Duration::from_secs(30) {
                return screen;
            }
        }
    };
    let screen = listed_until("fixture     ready");
    assert!(
        screen.contains("fixture     ready, ") && screen.contains("  in config.toml · runs `"),
        "{screen}"
    );
    assert!(screen.contains("  tools: "), "{screen}");
    assert!(screen.contains("echo"), "{screen}");
    assert!(
        screen.contains("not offered (enabled_tools/disabled_tools): crash"),
        "{screen}"
    );
    assert!(
        screen.contains(
            "repo-tools  not trusted yet, not started: `/mcp trust repo-tools` starts it"
        ),
        "{screen}"
    );

    // Trusted from the chat: it starts now, and the trust is kept for the next sessions.
    pane.type_text("/mcp trust repo-tools");
    pane.keys(&["Enter"]);
    let screen = listed_until("repo-tools  ready");
    assert!(screen.contains("repo-tools  ready, "), "{screen}");
    let kept = std::fs::read_to_string(home.path().join("mcp-trust.json")).unwrap_or_default();
    assert!(kept.contains("repo-tools"), "{kept}");
    assert!(upstream.requests().is_empty(), "/mcp calls no model");
    pane.type_text("/quit");
    pane.keys(&["Enter"]);
    pane.assert_exits();
}

/// A model reply that calls `tool` with `arguments`.
fn tool_reply(id: &str, tool: &str, arguments: &Value) -> Reply {
    reply_with_usage(vec![
        chunk(
            json!({"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": tool, "arguments": arguments.to_string()}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn the_protocols_commands_and_a_skill_work_and_read_only_refuses_a_write() {
    let upstream = MockUpstream::start().await;
    for (id, file) in [("w1", "one.txt"), ("w2", "two.txt")] {
        upstream.enqueue(
            CHAT,
            tool_reply(
                id,
                "write",
                &json!({"path": file, "content": format!("{file}\n")}),
            ),
        );
        upstream.enqueue(CHAT, text(&format!("wrote {file}")));
    }
    // `/compact` summarises the first turn with a model call of its own.
    upstream.enqueue(CHAT, text("SUMMARY: two files were written."));
    upstream.enqueue(CHAT, text("released it"));
    upstream.enqueue(
        CHAT,
        tool_reply(
            "w3",
            "write",
            &json!({"path": "one.txt", "content": "gone\n"}),
        ),
    );
    upstream.enqueue(CHAT, text("it is read-only"));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let skill = project.path().join(".corvid/skills/release");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release\ndescription: cut a release\n---\nTag it.\n",
    )
    .unwrap();
    let pane = tokio::task::block_in_place(|| {
        Pane::open(
            &upstream,
            home.path(),
            project.path(),
            &Setup {
                width: 100,
                height: 40,
                env: "CORVID_APPROVAL=full-auto",
                ..Setup::default()
            },
        )
    });
    tokio::task::block_in_place(|| {
        for (message, done) in [
            ("write one", "wrote one.txt"),
            ("write two", "wrote two.txt"),
        ] {
            pane.type_text(message);
            pane.keys(&["Enter"]);
            pane.wait_for(done, Duration::from_secs(15));
            pane.wait_for("─ done", Duration::from_secs(10));
        }
        pane.type_text("/diff 1");
        pane.keys(&["Enter"]);
        pane.wait_for("── turn 1 ──", Duration::from_secs(10));
        pane.type_text("/undo 2");
        pane.keys(&["Enter"]);
        pane.wait_for("undid turn 2", Duration::from_secs(10));
        pane.type_text("/compact");
        pane.keys(&["Enter"]);
        pane.wait_for("compacted:", Duration::from_secs(10));
        pane.type_text("/release 1.2");
        pane.keys(&["Enter"]);
        pane.wait_for("released it", Duration::from_secs(15));
        pane.type_text("/approval read-only");
        pane.keys(&["Enter"]);
        pane.type_text("overwrite one");
        pane.keys(&["Enter"]);
        let screen = pane.wait_for("it is read-only", Duration::from_secs(15));
        println!("{screen}");
    });
    assert!(
        !project.path().join("two.txt").exists(),
        "/undo 2 put it back"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("one.txt")).unwrap(),
        "one.txt\n",
        "read-only refused the write"
    );
    let requests = upstream.requests();
    // The engine wrote the skill's instruction before the user's words.
    assert!(
        requests.iter().any(|request| {
            let sent = request.json().to_string();
            sent.contains("1.2") && sent.contains("skill `release`")
        }),
        "the skill's message did not reach the model"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_projects_custom_command_is_listed_asks_for_its_command_line_and_expands() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, text("Reviewed."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(project.path())
        .status()
        .unwrap();
    assert!(status.success());
    let commands = project.path().join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("review.md"),
        "---\ndescription: review the work\nargument-hint: <focus>\n---\nReview $ARGUMENTS.\n!`git status --short`\n",
    )
    .unwrap();
    let pane = tokio::task::block_in_place(|| {
        Pane::open(
            &upstream,
            home.path(),
            project.path(),
            &Setup {
                width: 100,
                height: 40,
                ..Setup::default()
            },
        )
    });
    tokio::task::block_in_place(|| {
        pane.type_text("/help");
        pane.keys(&["Enter"]);
        pane.wait_for("<focus> review the work", Duration::from_secs(10));
        pane.type_text("/review the parser");
        pane.keys(&["Enter"]);
        // Its command line goes through the approval gate as any command does.
        pane.wait_for("? allow: Run git status --short", Duration::from_secs(10));
        pane.wait_for("1 yes · 2 always · 3 no", Duration::from_secs(1));
        pane.type_text("1");
        let screen = pane.wait_for("Reviewed.", Duration::from_secs(10));
        println!("{screen}");
    });
    let requests = upstream.requests();
    assert_eq!(requests.len(), 1);
    let sent = last_user_message(&requests[0].json());
    assert!(
        sent.starts_with("Review the parser.") && sent.contains("?? notes.md"),
        "{sent}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rewind_picks_an_earlier_message_puts_the_files_back_and_the_edit_is_sent() {
    let upstream = MockUpstream::start().await;
    for (id, file) in [("w1", "a.txt"), ("w2", "b.txt")] {
        upstream.enqueue(
            CHAT,
            tool_reply(
                id,
                "write",
                &json!({"path": file, "content": format!("{file}\n")}),
            ),
        );
        upstream.enqueue(CHAT, text(&format!("wrote {file}")));
    }
    upstream.enqueue(CHAT, text("wrote c instead"));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let pane = tokio::task::block_in_place(|| {
        Pane::open(
            &upstream,
            home.path(),
            project.path(),
            &Setup {
                width: 100,
                height: 40,
                env: "CORVID_APPROVAL=full-auto",
                ..Setup::default()
            },
        )
    });
    tokio::task::block_in_place(|| {
        for (message, done) in [("write a", "wrote a.txt"), ("write b", "wrote b.txt")] {
            pane.type_text(message);
            pane.keys(&["Enter"]);
            pane.wait_for(done, Duration::from_secs(15));
            pane.wait_for("─ done", Duration::from_secs(10));
        }
        pane.type_text("/rewind");
        pane.keys(&["Enter"]);
        pane.wait_for("go back to which message?", Duration::from_secs(10));
        // The latest message is selected; `f` goes back to it and puts its files back.
        pane.keys(&["f"]);
        pane.wait_for("files put back: b.txt", Duration::from_secs(10));
        // The message is back in the input: replace it and send.
        pane.keys(&["C-u"]);
        pane.type_text("write c");
        pane.keys(&["Enter"]);
        let screen = pane.wait_for("wrote c instead", Duration::from_secs(15));
        println!("{screen}");
    });
    assert!(!project.path().join("b.txt").exists(), "b.txt was put back");
    assert!(project.path().join("a.txt").exists());
    let requests = upstream.requests();
    let last = requests.last().unwrap().json();
    let users: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .filter_map(|message| message["content"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(users, ["write a", "write c"]);
}
