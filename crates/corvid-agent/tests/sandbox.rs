//! The sandbox as the engine sees it: `ready` reports it, a widened command or a kernel without
//! Landlock makes a command ask even under `full-auto`, and a running command's output streams
//! as `tool_output_delta` events.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use corvid_agent::{AgentConfig, AgentHandle, EventStream, ModelClient, StreamFuture};
use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ApproveParams, Event, EventMsg, Op, ProposalNotification,
    SandboxMode, SandboxNotice, SendParams, TurnOutcome,
};
use corvid_test_support::scripted::{ScriptedModel, ScriptedReply};
use corvid_tools::{Sandbox, SandboxProbe};
use corvid_wire::model::ChatRequest;

struct Scripted(Arc<ScriptedModel>);

impl ModelClient for Scripted {
    fn stream(&self, request: ChatRequest) -> StreamFuture<'_> {
        let reply = self.0.next(request);
        Box::pin(async move {
            match reply {
                ScriptedReply::Events(events) => {
                    Ok(Box::pin(futures_util::stream::iter(events)) as EventStream)
                }
                _ => std::future::pending().await,
            }
        })
    }
}

struct Agent {
    model: Arc<ScriptedModel>,
    handle: AgentHandle,
    events: corvid_agent::Subscription,
    seen: Vec<Event>,
}

impl Agent {
    fn start(project: &Path, sandbox: Sandbox, replies: Vec<ScriptedReply>) -> Self {
        let model = Arc::new(ScriptedModel::new(replies));
        let mut config = AgentConfig::new(project.to_owned(), "scripted-model");
        config.approval = ApprovalPolicy::FullAuto;
        config.output_dir = project.join(".corvid-test-output");
        config.sandbox = sandbox;
        let (handle, events) =
            AgentHandle::spawn(config, Arc::new(Scripted(Arc::clone(&model)))).unwrap();
        Self {
            model,
            handle,
            events,
            seen: Vec::new(),
        }
    }

    async fn until(&mut self, matches: impl Fn(&EventMsg) -> bool) -> EventMsg {
        loop {
            let event = tokio::time::timeout(Duration::from_secs(20), self.events.recv())
                .await
                .expect("an event within 20 s")
                .expect("the engine is running");
            self.seen.push(event.clone());
            if matches(&event.msg) {
                return event.msg;
            }
        }
    }

    async fn proposal(&mut self) -> ProposalNotification {
        match self.until(|msg| matches!(msg, EventMsg::Proposal(_))).await {
            EventMsg::Proposal(proposal) => proposal,
            _ => unreachable!(),
        }
    }

    fn reject(&self, proposal: &ProposalNotification) {
        self.handle.submit(Op::Approve(ApproveParams {
            proposal_id: proposal.proposal_id.clone(),
            decision: ApprovalDecision::Reject { feedback: None },
        }));
    }

    /// The system prompt of the first model request.
    fn system(&self) -> String {
        self.model.requests()[0].system.join("\n")
    }

    async fn finished(&mut self) -> TurnOutcome {
        match self
            .until(|msg| matches!(msg, EventMsg::TurnFinished(_)))
            .await
        {
            EventMsg::TurnFinished(finished) => finished.outcome,
            _ => unreachable!(),
        }
    }
}

fn enforced() -> Sandbox {
    // The helper is never started here: every command below is rejected before it runs.
    Sandbox::with_probe(
        "/nonexistent/corvid-sandbox",
        Vec::new(),
        None,
        SandboxProbe {
            landlock_abi: Some(7),
            seccomp: true,
            namespaces: false,
        },
    )
}

#[tokio::test]
async fn a_widened_command_asks_even_under_full_auto_and_says_what_is_widened() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = Agent::start(
        dir.path(),
        enforced(),
        vec![
            ScriptedReply::tool_call(
                "c1",
                "bash",
                r#"{"command":"npm install","sandbox":{"network":true}}"#,
            ),
            ScriptedReply::text("ok"),
        ],
    );
    match agent.until(|msg| matches!(msg, EventMsg::Ready(_))).await {
        EventMsg::Ready(ready) => {
            let sandbox = ready.sandbox.unwrap();
            assert_eq!(sandbox.mode, SandboxMode::Enforced);
            assert_eq!(sandbox.landlock_abi, Some(7));
            assert!(
                sandbox.summary.contains("network off"),
                "{}",
                sandbox.summary
            );
        }
        _ => unreachable!(),
    }
    agent.handle.submit(Op::Send(SendParams::text("install")));
    let proposal = agent.proposal().await;
    let notice = proposal.sandbox.clone().unwrap();
    assert_eq!(
        notice,
        SandboxNotice::Widened {
            write_outside: false,
            network: true
        }
    );
    assert_eq!(
        notice.describe(),
        "This command asks to run with more than the sandbox allows: it may use the network."
    );
    assert_eq!(
        proposal.always_scope, None,
        "no \"always\" for a widened command"
    );
    agent.reject(&proposal);
    assert_eq!(agent.finished().await, TurnOutcome::Completed);
}

#[tokio::test]
async fn without_landlock_every_command_asks_even_under_full_auto() {
    let dir = tempfile::tempdir().unwrap();
    let no_landlock = Sandbox::with_probe(
        "/nonexistent/corvid-sandbox",
        Vec::new(),
        None,
        SandboxProbe {
            landlock_abi: None,
            seccomp: true,
            namespaces: false,
        },
    );
    let mut agent = Agent::start(
        dir.path(),
        no_landlock,
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"touch marker"}"#),
            ScriptedReply::text("ok"),
        ],
    );
    match agent.until(|msg| matches!(msg, EventMsg::Ready(_))).await {
        EventMsg::Ready(ready) => {
            let sandbox = ready.sandbox.unwrap();
            assert_eq!(sandbox.mode, SandboxMode::Unavailable);
            assert!(
                sandbox.summary.contains("no Landlock"),
                "{}",
                sandbox.summary
            );
        }
        _ => unreachable!(),
    }
    agent.handle.submit(Op::Send(SendParams::text("touch")));
    let proposal = agent.proposal().await;
    assert!(
        matches!(&proposal.sandbox, Some(SandboxNotice::Unavailable { reason }) if reason.contains("no Landlock")),
        "{proposal:?}"
    );
    agent.reject(&proposal);
    assert_eq!(agent.finished().await, TurnOutcome::Completed);
    assert!(!dir.path().join("marker").exists());
    assert!(
        agent.system().contains("There is no sandbox"),
        "{}",
        agent.system()
    );
}

#[tokio::test]
async fn with_the_sandbox_off_full_auto_runs_commands_and_streams_their_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = Agent::start(
        dir.path(),
        Sandbox::off(),
        vec![
            ScriptedReply::tool_call(
                "c1",
                "bash",
                r#"{"command":"echo first; sleep 0.3; echo second"}"#,
            ),
            ScriptedReply::text("ok"),
        ],
    );
    agent.handle.submit(Op::Send(SendParams::text("run")));
    assert_eq!(agent.finished().await, TurnOutcome::Completed);
    let mut streamed = String::new();
    let mut result_seen_after = true;
    for event in &agent.seen {
        match &event.msg {
            EventMsg::Proposal(_) => panic!("full-auto with the sandbox off does not ask"),
            EventMsg::ToolOutputDelta { call_id, text } => {
                assert_eq!(call_id, "c1");
                streamed.push_str(text);
                result_seen_after = false;
            }
            EventMsg::ToolResult(_) => result_seen_after = true,
            _ => {}
        }
    }
    assert_eq!(streamed, "first\nsecond\n");
    assert!(result_seen_after, "the result comes after the deltas");
    let ready = agent.seen.iter().find_map(|event| match &event.msg {
        EventMsg::Ready(ready) => ready.sandbox.clone(),
        _ => None,
    });
    assert_eq!(ready.unwrap().mode, SandboxMode::Off);
    assert!(
        agent.system().contains("turned the sandbox off"),
        "{}",
        agent.system()
    );
}
