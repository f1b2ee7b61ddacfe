//! Prompt hooks (Claude Code's `"type": "prompt"`): instead of running a command, the hook's
//! prompt — with `$ARGUMENTS` replaced by the event's JSON, or the JSON added after it — is
//! sent to a model through the session's model client, and the model answers with JSON:
//! `{"ok": true}` lets the action go on, `{"ok": false, "reason": "..."}` blocks it as exit
//! code 2 would (the reason goes to the model). A model that fails or answers something else
//! is a non-blocking error, like a command hook that fails. Each call is metered like a turn's
//! step; the session writes it to the usage ledger once the event's hooks have run.

use std::sync::Arc;
use std::time::Duration;

use corvid_wire::model::{ChatRequest, Message, Role, StreamEvent};
use futures_util::StreamExt;
use serde_json::Value;

use super::Answer;
use crate::ledger::{CallEnd, CallMeter};
use crate::model::ModelClient;

/// What the model is told it is doing, and how to answer.
const JUDGE_SYSTEM: &str = "You evaluate one event of a coding agent's session against the \
condition the user wrote. Reply with a single JSON object and nothing else: {\"ok\": true} \
when the condition is met and the agent may go on, or {\"ok\": false, \"reason\": \"...\"} when \
it is not, with the reason the agent should read. No markdown, no other text.";

/// The placeholder a prompt hook's text names the event's JSON with.
const ARGUMENTS: &str = "$ARGUMENTS";

/// The model a session's prompt hooks ask, and the client that reaches it.
pub(crate) struct Judge {
    pub(crate) client: Arc<dyn ModelClient>,
    /// The session's model (follows `/model`); a hook's own `model` beats it.
    pub(crate) model: parking_lot::Mutex<String>,
    /// Calls made and not yet written to the usage ledger (the session takes them).
    pub(crate) calls: parking_lot::Mutex<Vec<(CallMeter, CallEnd)>>,
}

impl Judge {
    pub(crate) fn new(client: Arc<dyn ModelClient>, model: &str) -> Self {
        Self {
            client,
            model: parking_lot::Mutex::new(model.to_owned()),
            calls: parking_lot::Mutex::default(),
        }
    }
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("model", &*self.model.lock())
            .finish_non_exhaustive()
    }
}

/// The text sent to the model: the hook's prompt with the event's JSON in it.
pub(crate) fn with_arguments(prompt: &str, input: &str) -> String {
    if prompt.contains(ARGUMENTS) {
        prompt.replace(ARGUMENTS, input)
    } else {
        format!("{prompt}\n\nThe event:\n{input}")
    }
}

/// Asks the model about one event (`input`, its JSON) for the hook `prompt` of `event`.
pub(crate) async fn ask(
    judge: &Judge,
    model: Option<&str>,
    event: &str,
    prompt: &str,
    input: &str,
    timeout: Duration,
) -> Answer {
    let model = model.map_or_else(|| judge.model.lock().clone(), str::to_owned);
    let request = ChatRequest {
        model: model.clone(),
        system: vec![JUDGE_SYSTEM.to_owned()],
        messages: vec![Message::text(Role::User, with_arguments(prompt, input))],
        stream: true,
        ..ChatRequest::default()
    };
    let mut meter = CallMeter::start(&model);
    let asked = tokio::time::timeout(
        timeout,
        answer_text(judge.client.as_ref(), request, &mut meter),
    )
    .await;
    let end = match &asked {
        Ok(Ok(_)) => CallEnd::Answered,
        Ok(Err(_)) => CallEnd::Failed,
        Err(_) => CallEnd::Cancelled,
    };
    judge.calls.lock().push((meter, end));
    let reply = match asked {
        Ok(Ok(text)) => text,
        Ok(Err(error)) => return failed(event, &model, &error.to_string()),
        Err(_) => {
            return failed(
                event,
                &model,
                &format!("no answer within {} s", timeout.as_secs_f64()),
            );
        }
    };
    match verdict(&reply) {
        Some((true, _)) => Answer::default(),
        Some((false, reason)) => Answer {
            blocked: Some(
                reason.unwrap_or_else(|| format!("the {event} prompt hook's condition is not met")),
            ),
            ..Answer::default()
        },
        None => failed(
            event,
            &model,
            &format!("the answer was not the JSON asked for: {}", reply.trim()),
        ),
    }
}

fn failed(event: &str, model: &str, why: &str) -> Answer {
    Answer {
        notices: vec![format!(
            "the {event} prompt hook (model {model}) failed: {why}"
        )],
        ..Answer::default()
    }
}

/// Why the hook's model gave no answer: the call failed, or its stream broke.
#[derive(Debug, thiserror::Error)]
enum NoAnswer {
    #[error("{}", .0.message)]
    Call(crate::model::ModelError),
    #[error("{}", .0.message)]
    Stream(corvid_wire::model::WireError),
}

/// The model's whole text reply, metered by `meter`.
async fn answer_text(
    client: &dyn ModelClient,
    request: ChatRequest,
    meter: &mut CallMeter,
) -> Result<String, NoAnswer> {
    let mut stream = match client.call(request).await {
        Ok(reply) => {
            meter.replied(reply.attempts);
            meter.served_by(reply.served_by);
            reply.events
        }
        Err(error) => {
            meter.failed(error.attempts);
            return Err(NoAnswer::Call(error));
        }
    };
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        meter.saw(&event);
        match event {
            StreamEvent::TextDelta { text: delta } => text.push_str(&delta),
            StreamEvent::Error(error) => return Err(NoAnswer::Stream(error)),
            _ => {}
        }
    }
    Ok(text)
}

/// `ok` and `reason` of the model's answer: the JSON object in it (a model may still wrap it
/// in a code fence or a sentence).
fn verdict(reply: &str) -> Option<(bool, Option<String>)> {
    let start = reply.find('{')?;
    let end = reply.rfind('}')?;
    let json: Value = serde_json::from_str(reply.get(start..=end)?).ok()?;
    let ok = json.get("ok").and_then(Value::as_bool)?;
    let reason = json
        .get("reason")
        .and_then(Value::as_str)
        .filter(|reason| !reason.trim().is_empty())
        .map(str::to_owned);
    Some((ok, reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_replaces_arguments_or_follows_the_prompt() {
        assert_eq!(
            with_arguments("Judge $ARGUMENTS now", r#"{"a":1}"#),
            r#"Judge {"a":1} now"#
        );
        assert!(with_arguments("Judge this", "{}").ends_with("The event:\n{}"));
    }

    #[test]
    fn the_verdict_is_read_from_the_json_in_the_answer() {
        assert_eq!(verdict(r#"{"ok": true}"#), Some((true, None)));
        assert_eq!(
            verdict("```json\n{\"ok\": false, \"reason\": \"tests fail\"}\n```"),
            Some((false, Some("tests fail".to_owned())))
        );
        assert_eq!(verdict("yes, fine"), None);
        assert_eq!(verdict(r#"{"reason": "no ok"}"#), None);
    }
}
