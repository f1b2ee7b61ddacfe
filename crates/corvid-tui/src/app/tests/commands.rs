//! Slash commands, completion, mentions, pickers and `/mcp`.

use super::*;

#[test]
fn slash_commands_without_arguments_show_the_setting() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.event(ready());
    printed(&mut app);
    app.submit_line("/model");
    let text = printed(&mut app);
    assert!(text.contains("model: grok-4.6"), "{text}");
    assert!(text.contains("available: grok-4.6, fast"), "{text}");
    assert!(text.contains("no key yet"), "{text}");
    assert!(text.contains(": claude"), "{text}");
    assert!(!text.contains("fast, claude"), "apart: {text}");
    app.submit_line("/approval");
    assert!(printed(&mut app).contains("approvals: ask"));
    app.submit_line("/approval full-auto");
    app.submit_line("/undo 2");
    app.submit_line("/diff 1");
    app.submit_line("/compact");
    app.submit_line("/release 1.2");
    app.submit_line("/new");
    app.submit_line("/open");
    assert_eq!(
        ops(&recorder),
        vec![
            Op::SetApprovalPolicy {
                policy: ApprovalPolicy::FullAuto
            },
            Op::Undo { turn: Some(2) },
            Op::Diff { turn: Some(1) },
            Op::Compact,
            Op::Send(SendParams {
                skill: Some("release".to_owned()),
                ..SendParams::text("1.2")
            }),
            Op::OpenConversation {
                conversation_id: None
            },
        ]
    );
    assert!(
        app.hint.as_deref().unwrap().contains("/open <id>"),
        "{:?}",
        app.hint
    );
}

#[test]
fn completion_of_commands_and_mentions_and_the_file_goes_to_the_model() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir(folder.path().join("src")).unwrap();
    std::fs::write(folder.path().join("src/lib.rs"), "pub fn sign() {}\n").unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    typed(&mut app, "/comp");
    app.key(key(KeyCode::Tab));
    assert_eq!(app.editor.text(), "/compact ");
    app.key(ctrl('u'));
    typed(&mut app, "look at @sr");
    app.key(key(KeyCode::Tab));
    assert_eq!(app.editor.text(), "look at @src/");
    typed(&mut app, "l");
    app.key(key(KeyCode::Tab));
    assert_eq!(app.editor.text(), "look at @src/lib.rs ");
    app.key(key(KeyCode::Enter));
    let Some(Op::Send(params)) = ops(&recorder).pop() else {
        panic!("no send");
    };
    let sent = serde_json::to_string(&params).unwrap();
    assert!(sent.contains("pub fn sign() {}"), "{sent}");
    assert!(printed(&mut app).contains("attached @src/lib.rs (1 line)"));
}

#[test]
fn a_mention_outside_the_project_is_not_attached() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("secret.txt"), "top secret").unwrap();
    let project = outer.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let (message, notes) = crate::mention::expand(&project, "see @../secret.txt");
    assert_eq!(message, "see @../secret.txt");
    assert!(notes.is_empty());
}

#[test]
fn resume_opens_a_picker_and_enter_switches() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.submit_line("/resume");
    assert_eq!(ops(&recorder), vec![Op::ListConversations]);
    let conversation = |id: &str, title: &str| ConversationSummary {
        id: id.to_owned(),
        title: title.to_owned(),
        updated_at: 0,
        message_count: 1,
    };
    app.reply(reply(
        1,
        corvid_protocol::ReplyOk::Conversations {
            conversations: vec![conversation("c2", "newest"), conversation("c1", "older")],
            current: Some("c2".to_owned()),
        },
    ));
    let (view, _) = app.view(80, 10);
    let view = crate::render::plain(&view);
    assert!(view.contains("c1 older · 1 message"), "{view}");
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Enter));
    assert_eq!(
        ops(&recorder).last(),
        Some(&Op::OpenConversation {
            conversation_id: Some("c1".to_owned())
        })
    );
    // A plain /list prints instead of picking.
    app.submit_line("/list");
    app.reply(reply(
        3,
        corvid_protocol::ReplyOk::Conversations {
            conversations: vec![conversation("c2", "")],
            current: Some("c2".to_owned()),
        },
    ));
    assert!(printed(&mut app).contains("* c2  (untitled) (1 message)"));
}

#[test]
fn help_on_a_narrow_terminal_wraps_each_description_under_itself() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.set_width(60);
    app.submit_line("/help");
    let lines = std::mem::take(&mut app.output);
    let text = crate::render::plain(&lines);
    assert!(
        text.contains(
            "/approval  show the approval policy (/approval <policy>\n           changes it)\n"
        ),
        "{text}"
    );
    assert!(text.starts_with("\n› /help\n"), "{text}");
}

#[test]
fn slash_mcp_asks_for_the_servers_and_shows_each_with_its_state_and_tools() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.event(ready());
    printed(&mut app);
    app.submit_line("/mcp");
    assert_eq!(ops(&recorder).last(), Some(&Op::ListToolServers));
    let server = |name: &str, state: ToolServerState| ToolServer {
        name: name.to_owned(),
        configured_in: ".corvid/mcp.json".to_owned(),
        transport: "runs `node server.js`".to_owned(),
        state,
        reason: None,
        tools: Vec::new(),
        withheld: Vec::new(),
        description: String::new(),
    };
    app.reply(reply(
        1,
        corvid_protocol::ReplyOk::ToolServers {
            servers: vec![
                ToolServer {
                    tools: vec![
                        "mcp__everything__echo".to_owned(),
                        "mcp__everything__get-sum".to_owned(),
                    ],
                    withheld: vec!["get-env".to_owned()],
                    ..server("everything", ToolServerState::Ready)
                },
                ToolServer {
                    reason: Some("it did not start within 1.5 s (startup_timeout_sec)".to_owned()),
                    ..server("stuck", ToolServerState::Failed)
                },
                server("repo", ToolServerState::Untrusted),
                server("remote", ToolServerState::NeedsSignIn),
            ],
        },
    ));
    let shown = printed(&mut app);
    for expected in [
        "everything  ready, 2 tools\n  in .corvid/mcp.json · runs `node server.js`\n",
        "  tools: echo, get-sum",
        "not offered (enabled_tools/disabled_tools): get-env",
        "stuck       failed: it did not start within 1.5 s (startup_timeout_sec)",
        "repo        not trusted yet, not started: `/mcp trust repo` starts it",
        "remote      needs sign-in: `corvid mcp login remote` in a terminal",
    ] {
        assert!(shown.contains(expected), "{expected:?} not in\n{shown}");
    }

    app.reply(reply(
        1,
        corvid_protocol::ReplyOk::ToolServers { servers: vec![] },
    ));
    assert!(printed(&mut app).contains("no MCP servers in this session"));
}

#[test]
fn slash_mcp_trust_asks_the_engine_to_trust_that_server() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.event(ready());
    app.submit_line("/mcp trust repo-tools");
    assert_eq!(
        ops(&recorder).last(),
        Some(&Op::TrustToolServer {
            name: "repo-tools".to_owned()
        })
    );
    let before = ops(&recorder).len();
    app.submit_line("/mcp trust");
    app.submit_line("/mcp start all");
    assert_eq!(ops(&recorder).len(), before, "nothing sent without a name");
    let (view, _) = app.view(120, 10);
    assert!(
        crate::render::plain(&view).contains("trust <server>"),
        "{}",
        crate::render::plain(&view)
    );
}
