//! Every frame a face receives through a `Link` (the terminal UI's transport in-process; the
//! page's socket and ACP's pump carry the same frames) is a frame of the published JSON schema.
//! The faces' shared scenario (`tests/scenarios/faces.json`, also played through every face by
//! `tests/faces/run.py`) is played on the service with a scripted model: its lines parsed by the
//! protocol's one command parser (skills included), its files checked, and every frame
//! serialised and validated; questions are answered through the link as the step says. Steps
//! that need an MCP server, or only one face, are left to the faces' test.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use corvid_agent::{Agents, Link, OpenConversation};
use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, EventMsg, Op, Response, SendParams, ServerFrame, commands,
    schema_json,
};
use corvid_store::Store;
use corvid_test_support::agent::{self, PATIENCE, ScriptedClient};
use corvid_test_support::scripted::{ScriptedModel, ScriptedReply};
use serde_json::{Value, json};
use tokio::time::timeout;

fn scenario() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scenarios/faces.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn validator() -> jsonschema::Validator {
    let mut schema: Value = serde_json::from_str(&schema_json()).unwrap();
    let object = schema.as_object_mut().unwrap();
    object.remove("anyOf");
    object.insert("$ref".to_owned(), json!("#/$defs/ServerFrame"));
    jsonschema::validator_for(&schema).unwrap()
}

/// A scenario reply (`{"text"}`, `{"pieces"}` or `{"tool", "arguments"}`) as the scripted
/// model's (pieces as one text: the faces' test is the one that stops a turn mid-stream).
fn reply(step: &Value) -> ScriptedReply {
    if let Some(pieces) = step["pieces"].as_array() {
        let text: String = pieces.iter().filter_map(Value::as_str).collect();
        return ScriptedReply::text(&text);
    }
    match step["text"].as_str() {
        Some(text) => ScriptedReply::text(text),
        None => {
            let tool = step["tool"].as_str().unwrap();
            ScriptedReply::tool_call(
                &format!("call_{tool}"),
                tool,
                &step["arguments"].to_string(),
            )
        }
    }
}

/// The frame's kind as the faces' test names it: `event:<msg>`, `reply:<ok>|error`, `protocol`.
fn kind(frame: &Value) -> String {
    let outer = frame["type"].as_str().unwrap_or_default();
    if frame.get("error").is_some() {
        return format!("{outer}:error");
    }
    match frame["msg"]["type"]
        .as_str()
        .or_else(|| frame["ok"]["type"].as_str())
    {
        Some(inner) => format!("{outer}:{inner}"),
        None => outer.to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_frame_of_the_faces_scenario_is_a_schema_frame() {
    let scenario = scenario();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    for (path, text) in scenario["project"].as_object().unwrap() {
        let file = project.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text.as_str().unwrap()).unwrap();
    }
    std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(project)
        .status()
        .unwrap();
    let model = Arc::new(ScriptedModel::new(Vec::new()));
    let store = Arc::new(Mutex::new(Store::open_in_memory().unwrap()));
    let agents = Agents::new(Arc::new(ScriptedClient(Arc::clone(&model))), store);
    // Checkpoints on (as every face has them), for `/undo` and `/diff`.
    let data = tempfile::tempdir().unwrap();
    let mut config = agent::config(project, ApprovalPolicy::Ask);
    config.checkpoint_dir = Some(data.path().join("checkpoints"));
    let (link, mut frames) = Link::open(agents, config, OpenConversation::New)
        .await
        .unwrap();
    let validator = validator();
    let mut kinds = BTreeSet::new();
    let mut played = 0;
    let mut asked = 0;
    for step in scenario["steps"].as_array().unwrap() {
        if step.get("faces").is_some() || step.get("mcp").is_some() {
            continue;
        }
        let (op, turn) = match (step["policy"].as_str(), step["say"].as_str()) {
            (Some(policy), _) => (
                Op::SetApprovalPolicy {
                    policy: policy.parse().unwrap(),
                },
                false,
            ),
            (None, Some(line)) => {
                let op = match commands::parse(line, &link.session().commands()) {
                    Some(parsed) => parsed.unwrap(),
                    None => Op::Send(SendParams::text(line)),
                };
                (op, step["turn"].as_bool().unwrap())
            }
            _ => panic!("a step says a line or sets a policy: {step}"),
        };
        if step["say"] == "/mcp" {
            continue; // no MCP server in-process
        }
        for scripted in step["model"].as_array().into_iter().flatten() {
            model.push(reply(scripted));
        }
        let id = link.request(op);
        let (mut replied, mut finished) = (false, !turn);
        while !(replied && finished) {
            let frame = timeout(PATIENCE, frames.recv())
                .await
                .unwrap_or_else(|_| panic!("no frame within {PATIENCE:?} at {step}"))
                .expect("the session stays open");
            let value = serde_json::to_value(&frame).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|error| error.to_string())
                .collect();
            assert!(errors.is_empty(), "not a schema frame: {value}: {errors:?}");
            kinds.insert(kind(&value));
            match frame {
                ServerFrame::Reply(reply) if reply.id == id => {
                    if let Err(error) = reply.into_result() {
                        panic!("{step} was refused: {error:?}");
                    }
                    replied = true;
                }
                ServerFrame::Event(event)
                    if event.depth == 0 && matches!(event.msg, EventMsg::TurnFinished(_)) =>
                {
                    finished = true;
                }
                // A question: answered as the step says, and its title is the one every face
                // shows.
                ServerFrame::Request(request) => {
                    let answer = step["question"]
                        .as_str()
                        .expect("a question nobody expected");
                    if let Some(title) = step["title"].as_str() {
                        assert_eq!(request.approval.title, title);
                    }
                    let decision = match answer {
                        "approve" => ApprovalDecision::Approve,
                        _ => ApprovalDecision::Reject {
                            feedback: step["feedback"].as_str().map(str::to_owned),
                        },
                    };
                    let answered = link.respond(Response::new(request.id, decision));
                    assert!(answered.into_result().is_ok(), "the answer was not taken");
                    asked += 1;
                }
                _ => {}
            }
        }
        for (path, expected) in step["files"].as_object().into_iter().flatten() {
            let found = std::fs::read_to_string(project.join(path)).ok();
            assert_eq!(found.as_deref(), expected.as_str(), "{path} after {step}");
        }
        played += 1;
    }
    assert!(played >= 10, "the scenario played {played} steps");
    assert!(asked >= 1, "no question was asked");
    // The kinds the scenario cannot play without were all seen (and so all validated).
    for wanted in [
        "event:ready",
        "event:tool_call",
        "event:tool_result",
        "event:turn_finished",
        "event:undone",
        "event:compacted",
        "event:warning",
        "event:settings_changed",
        "event:proposal_closed",
        "request",
        "reply:diff",
        "reply:undone",
        "reply:compacted",
    ] {
        assert!(kinds.contains(wanted), "{wanted} not seen: {kinds:?}");
    }
}
