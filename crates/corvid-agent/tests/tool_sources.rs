//! The tool seam: a source plugged in through `AgentConfig::tool_plugins` is offered to the
//! model, its calls go through the same approval gate as the built-ins, its results reach the
//! model, and what it has to say arrives as warnings; a built-in wins a name clash.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::sync::{Arc, Mutex};

use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ApprovalRule, EventMsg, ProposalKind, TurnOutcome,
};
use corvid_test_support::agent::{self, ScriptedAgent, tool_names};
use corvid_test_support::scripted::ScriptedReply;
use corvid_tools::{
    AlwaysAllow, Listing, Plan, Prepared, Proposal, Run, ToolContext, ToolDetail, ToolError,
    ToolFuture, ToolImage, ToolKind, ToolOutput, ToolPlugin, ToolSource, ToolSpec,
};
use corvid_wire::model::{Part, ToolResultContent};
use serde_json::{Value, json};

/// A notebook: `note_add` and `note_clear` change it (from the origin `test:notes`), `read`
/// clashes with the built-in; the listing and its notices can change between turns.
#[derive(Default)]
struct Notebook {
    notes: Mutex<Vec<String>>,
    listing: Mutex<Listing>,
    opened: Mutex<u32>,
}

impl Notebook {
    fn new(always_allow: AlwaysAllow, notices: &[&str]) -> Arc<Self> {
        let tool = |name: &str, description: &str| ToolSpec {
            always_allow,
            ..ToolSpec::new(
                name,
                description,
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
                ToolKind::Mutating,
            )
            .with_origin("test:notes")
        };
        let notebook = Self::default();
        *notebook.listing.lock().unwrap() = Listing {
            tools: vec![
                tool("note_add", "Adds a note."),
                tool(
                    "read",
                    "The notebook's read, which must lose to the built-in.",
                ),
                tool("note_clear", "Forgets every note."),
            ],
            notices: notices.iter().map(|notice| (*notice).to_owned()).collect(),
        };
        Arc::new(notebook)
    }
}

#[derive(Debug)]
enum NotePlan {
    Add(String),
    Clear,
    Photo,
}

impl ToolSource for Notebook {
    fn name(&self) -> &str {
        "notebook"
    }

    fn list(&self) -> ToolFuture<'_, Listing> {
        let listing = self.listing.lock().unwrap().clone();
        Box::pin(async move { listing })
    }

    fn prepare<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a, Result<Prepared, ToolError>> {
        Box::pin(async move {
            let (summary, plan) = match tool {
                "note_add" => {
                    let Some(text) = arguments.get("text").and_then(Value::as_str) else {
                        return Err(ToolError::invalid(tool, "`text` is required"));
                    };
                    (
                        format!("Add the note {text:?}"),
                        NotePlan::Add(text.to_owned()),
                    )
                }
                "note_clear" => ("Forget every note".to_owned(), NotePlan::Clear),
                "note_photo" => ("Show the notebook".to_owned(), NotePlan::Photo),
                other => return Err(ToolError::Failed(format!("the notebook has no {other}"))),
            };
            Ok(Prepared::new(
                tool,
                ToolKind::Mutating,
                Proposal {
                    summary,
                    ..Proposal::default()
                },
                Plan::external(plan),
            ))
        })
    }

    fn apply<'a>(
        &'a self,
        _tool: &'a str,
        plan: Plan,
        _run: Run,
    ) -> ToolFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let mut notes = self.notes.lock().unwrap();
            match plan.into_external::<NotePlan>().unwrap() {
                NotePlan::Add(text) => {
                    notes.push(text.clone());
                    Ok(ToolOutput::text(format!(
                        "noted {text:?} ({} notes)",
                        notes.len()
                    )))
                }
                NotePlan::Clear => {
                    notes.clear();
                    Ok(ToolOutput::text("forgot every note"))
                }
                NotePlan::Photo => Ok(ToolOutput {
                    detail: Some(ToolDetail::Images(vec![ToolImage {
                        media_type: "image/png".to_owned(),
                        data: "iVBORw0KGgo=".to_owned(),
                    }])),
                    ..ToolOutput::text("a photo of the notebook")
                }),
            }
        })
    }

    fn summary(&self, tool: &str, arguments: &Value) -> Option<String> {
        Some(format!(
            "notebook {tool} {}",
            arguments.get("text").and_then(Value::as_str).unwrap_or("")
        ))
    }
}

#[derive(Debug)]
struct NotebookPlugin(Arc<Notebook>);

impl std::fmt::Debug for Notebook {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Notebook")
    }
}

impl ToolPlugin for NotebookPlugin {
    fn open(&self, context: &Arc<ToolContext>) -> Arc<dyn ToolSource> {
        // The session's own context: the project folder the built-ins work in.
        assert!(context.workspace().root().is_dir());
        *self.0.opened.lock().unwrap() += 1;
        Arc::clone(&self.0) as Arc<dyn ToolSource>
    }
}

/// An agent with the notebook plugged in.
async fn start(
    project: &Path,
    policy: ApprovalPolicy,
    notebook: &Arc<Notebook>,
    replies: Vec<ScriptedReply>,
) -> ScriptedAgent {
    let mut config = agent::config(project, policy);
    config.tool_plugins = vec![Arc::new(NotebookPlugin(Arc::clone(notebook)))];
    ScriptedAgent::spawn(config, replies).await
}

#[tokio::test]
async fn a_plugged_in_tool_is_offered_gated_applied_and_its_result_reaches_the_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "from the disk\n").unwrap();
    let notebook = Notebook::new(AlwaysAllow::Tool, &["the notebook skipped a page"]);
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::Ask,
        &notebook,
        vec![
            ScriptedReply::tool_call("c1", "note_add", r#"{"text":"buy milk"}"#),
            ScriptedReply::tool_call("c2", "read", r#"{"path":"a.txt"}"#),
            ScriptedReply::tool_call("c3", "note_add", r#"{"txt":"typo"}"#),
            ScriptedReply::text("Noted."),
        ],
    )
    .await;
    agent.send("remember to buy milk");
    let proposal = agent.proposal().await;
    assert_eq!(
        proposal.kind,
        ProposalKind::Other {
            tool: "note_add".to_owned(),
            summary: "Add the note \"buy milk\"".to_owned(),
        }
    );
    assert_eq!(proposal.always_scope, Some(ApprovalRule::tool("note_add")));
    // Nothing happens before the user says yes.
    assert!(notebook.notes.lock().unwrap().is_empty());
    agent.decide(&proposal.proposal_id, ApprovalDecision::Approve);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);

    assert_eq!(*notebook.notes.lock().unwrap(), ["buy milk"]);
    assert_eq!(
        agent.results_in(1),
        [("noted \"buy milk\" (1 notes)".to_owned(), false)]
    );
    // `read` is the built-in's: the file's text, not the notebook's refusal.
    let (read, is_error) = agent.results_in(2)[0].clone();
    assert!(!is_error && read.contains("from the disk"), "{read}");
    // Arguments the source refuses come back as the source's error; nothing ran.
    assert_eq!(
        agent.results_in(3),
        [(
            "invalid arguments for `note_add`: `text` is required".to_owned(),
            true
        )]
    );
    assert_eq!(notebook.notes.lock().unwrap().len(), 1);

    let request = &agent.model.requests()[0];
    let offered = tool_names(request);
    assert!(
        offered.contains(&"note_add") && offered.contains(&"note_clear"),
        "{offered:?}"
    );
    assert_eq!(offered.iter().filter(|name| **name == "read").count(), 1);
    let read = request
        .tools
        .iter()
        .find(|tool| tool.name == "read")
        .unwrap();
    assert!(
        !read
            .description
            .as_deref()
            .unwrap_or("")
            .contains("notebook"),
        "the built-in read wins the clash"
    );
    // The source's line for front ends, and its notice and the clash as warnings.
    let summaries: Vec<String> = agent
        .seen
        .iter()
        .filter_map(|event| match &event.msg {
            EventMsg::ToolCall(call) => Some(call.summary.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(summaries[0], "notebook note_add buy milk");
    assert_eq!(summaries[1], "read a.txt");
    let warnings = agent.warnings();
    assert!(
        warnings.contains(&"the notebook skipped a page".to_owned()),
        "{warnings:?}"
    );
    assert!(
        warnings.contains(
            &"the notebook tool `read` is not offered: a built-in tool has that name".to_owned()
        ),
        "{warnings:?}"
    );
    assert_eq!(*notebook.opened.lock().unwrap(), 1);
}

#[tokio::test]
async fn always_for_an_origin_allows_its_other_tools_and_the_offer_follows_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let notebook = Notebook::new(AlwaysAllow::Origin, &["a notice"]);
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::Ask,
        &notebook,
        vec![
            ScriptedReply::tool_call("c1", "note_add", r#"{"text":"one"}"#),
            ScriptedReply::tool_call("c2", "note_clear", "{}"),
            ScriptedReply::text("done"),
            ScriptedReply::tool_call("c3", "note_pin", "{}"),
            ScriptedReply::text("done again"),
        ],
    )
    .await;
    agent.send("note and clear");
    let proposal = agent.proposal().await;
    assert_eq!(
        proposal.always_scope,
        Some(ApprovalRule::origin("test:notes"))
    );
    agent.decide(
        &proposal.proposal_id,
        ApprovalDecision::ApproveAlways {
            scope: ApprovalRule::origin("test:notes"),
        },
    );
    // `note_clear` is from the same origin: it runs without a proposal.
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    // The one proposal was taken above; no other request came.
    assert!(agent.requests.is_empty(), "{:?}", agent.requests);
    assert!(notebook.notes.lock().unwrap().is_empty(), "cleared");
    assert_eq!(
        agent.results_in(2),
        [("forgot every note".to_owned(), false)]
    );

    // Between turns the source drops `note_clear` and lists `note_pin`; its notice is not
    // repeated while it lasts.
    {
        let mut listing = notebook.listing.lock().unwrap();
        listing.tools.retain(|tool| tool.name != "note_clear");
        let mut pin = listing.tools[0].clone();
        pin.name = "note_pin".to_owned();
        listing.tools.push(pin);
    }
    agent.send("pin it");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let requests = agent.model.requests();
    let offered = tool_names(&requests[3]);
    assert!(
        offered.contains(&"note_pin") && !offered.contains(&"note_clear"),
        "{offered:?}"
    );
    // The source refused it (`the notebook has no note_pin`): the call reached it.
    assert_eq!(
        agent.results_in(4),
        [("the notebook has no note_pin".to_owned(), true)]
    );
    let notices = agent
        .warnings()
        .iter()
        .filter(|warning| *warning == "a notice")
        .count();
    assert_eq!(notices, 1);
    // One session, one source: opened once for both turns.
    assert_eq!(*notebook.opened.lock().unwrap(), 1);
}

#[tokio::test]
async fn a_custom_tool_folder_works_through_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(".corvid/tools/shout");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("tool.json"),
        r#"{"name": "shout", "description": "Upper-cases a text.", "command": "tr a-z A-Z",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}"#,
    )
    .unwrap();
    let bad = dir.path().join(".corvid/tools/whisper");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("tool.json"), r#"{"name": "whisper"}"#).unwrap();
    let mut config = agent::config(dir.path(), ApprovalPolicy::Ask);
    config.tool_plugins = vec![Arc::new(corvid_tools::CustomTools)];
    let mut agent = ScriptedAgent::spawn(
        config,
        vec![
            ScriptedReply::tool_call("c1", "shout", r#"{"text": 3}"#),
            ScriptedReply::tool_call("c2", "shout", r#"{"text": "hello; rm -rf ~"}"#),
            ScriptedReply::text("Shouted."),
        ],
    )
    .await;
    agent.send("shout hello");
    let proposal = agent.proposal().await;
    match &proposal.kind {
        ProposalKind::Other { tool, summary } => {
            assert_eq!(tool, "shout");
            assert!(
                summary.starts_with(
                    "Run the custom tool `shout`: `tr a-z A-Z` in .corvid/tools/shout, with {"
                ),
                "{summary}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(proposal.always_scope, Some(ApprovalRule::tool("shout")));
    agent.decide(&proposal.proposal_id, ApprovalDecision::Approve);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    // The first call broke the schema: refused without a proposal.
    let (refused, is_error) = agent.results_in(1)[0].clone();
    assert!(
        is_error && refused.starts_with("invalid arguments for `shout`: "),
        "{refused}"
    );
    let (shouted, is_error) = agent.results_in(2)[0].clone();
    assert!(!is_error, "{shouted}");
    assert!(
        shouted.contains(r#"{"TEXT":"HELLO; RM -RF ~"}"#),
        "{shouted}"
    );
    let warnings = agent.warnings();
    assert!(
        warnings.iter().any(|warning| warning.starts_with(
            "skipped the custom tool .corvid/tools/whisper/tool.json: `description` is missing"
        )),
        "{warnings:?}"
    );
    let requests = agent.model.requests();
    let offered = tool_names(&requests[0]);
    assert!(offered.contains(&"shout") && !offered.contains(&"whisper"));
}

#[tokio::test]
async fn images_in_a_tool_result_reach_the_model_after_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let notebook = Notebook::new(AlwaysAllow::Tool, &[]);
    notebook.listing.lock().unwrap().tools.push(ToolSpec::new(
        "note_photo",
        "Shows the notebook.",
        json!({"type": "object", "properties": {}}),
        ToolKind::Read,
    ));
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::Ask,
        &notebook,
        vec![
            ScriptedReply::tool_call("p1", "note_photo", "{}"),
            ScriptedReply::text("A nice notebook."),
        ],
    )
    .await;
    agent.send("show me");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let request = &agent.model.requests()[1];
    let Some(Part::ToolResult(result)) = request.messages.last().unwrap().parts.first() else {
        panic!("no tool result: {request:?}");
    };
    assert_eq!(
        result.content,
        [
            ToolResultContent::Text {
                text: "a photo of the notebook".to_owned()
            },
            ToolResultContent::Image(corvid_wire::model::Image {
                source: corvid_wire::model::ImageSource::Base64 {
                    media_type: "image/png".to_owned(),
                    data: "iVBORw0KGgo=".to_owned(),
                },
                detail: None,
            }),
        ]
    );
}
