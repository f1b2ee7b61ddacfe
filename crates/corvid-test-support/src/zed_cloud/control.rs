//! Scripting the mock Zed cloud over HTTP, for SDK tests in other languages that run it as a
//! process ([`super::serve_as_process`]):
//!
//! - `POST /__mock/completion` with `{"lines": [...], "server_header": true}` or
//!   `{"status": 402, "body": {...}, "headers": {...}}` queues a `/completions` answer;
//! - `POST /__mock/expire_tokens` with `{"status": 401, "header": "x-zed-expired-token"}`
//!   (header optional) makes every token issued so far stale;
//! - `POST /__mock/account` with `{"plan": "zed_pro", "models_enabled": true}` (either field);
//! - `GET /__mock/requests` lists what was received (headers and JSON bodies);
//! - `GET /__mock/state` is `{"mint_requests": n}`.

use parking_lot::Mutex;

use axum::response::Response;
use serde_json::{Value, json};

use super::{CompletionReply, MockState, StaleReply, json_reply};

pub(super) fn control(state: &Mutex<MockState>, command: &str, body: &[u8]) -> Response {
    let script: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let mut state = state.lock();
    match command {
        "completion" => {
            let reply = match script["lines"].as_array() {
                Some(lines) => CompletionReply::Lines {
                    lines: lines.clone(),
                    server_header: script["server_header"].as_bool().unwrap_or(true),
                },
                None => CompletionReply::Status {
                    status: status_of(&script).unwrap_or(500),
                    body: script["body"].clone(),
                    headers: script["headers"]
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(name, value)| {
                            (name.clone(), value.as_str().unwrap_or_default().to_owned())
                        })
                        .collect(),
                },
            };
            state.completions.push_back(reply);
            json_reply(200, &json!({"queued": true}), &[])
        }
        "expire_tokens" => {
            let header = match script["header"].as_str() {
                Some("x-zed-expired-token") => Some("x-zed-expired-token"),
                Some("x-zed-outdated-token") => Some("x-zed-outdated-token"),
                _ => None,
            };
            let reply = StaleReply {
                status: status_of(&script).unwrap_or(401),
                header,
            };
            let tokens: Vec<String> = state.fresh.drain().collect();
            for token in tokens {
                state.stale.insert(token, reply);
            }
            json_reply(200, &json!({"expired": true}), &[])
        }
        "account" => {
            if let Some(plan) = script["plan"].as_str() {
                state.plan = plan.to_owned();
            }
            if let Some(enabled) = script["models_enabled"].as_bool() {
                state.models_enabled = enabled;
            }
            json_reply(200, &json!({"ok": true}), &[])
        }
        "requests" => {
            let recorded: Vec<Value> = state
                .recorded
                .iter()
                .map(|request| {
                    let headers: serde_json::Map<String, Value> = request
                        .headers
                        .iter()
                        .map(|(name, value)| {
                            (
                                name.to_string(),
                                Value::from(value.to_str().unwrap_or_default()),
                            )
                        })
                        .collect();
                    json!({"method": request.method, "path": request.path,
                        "headers": headers, "body": request.json()})
                })
                .collect();
            json_reply(200, &Value::from(recorded), &[])
        }
        "state" => json_reply(200, &json!({"mint_requests": state.mint_requests}), &[]),
        _ => json_reply(404, &json!({"message": "unknown mock command"}), &[]),
    }
}

fn status_of(script: &Value) -> Option<u16> {
    script["status"]
        .as_u64()
        .and_then(|status| u16::try_from(status).ok())
}
