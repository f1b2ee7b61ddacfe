//! The `/__mock/…` control endpoints: scripting replies and listing requests over HTTP.

use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, StatusCode};
use serde_json::{Value, json};

use super::reply::{Reply, StreamEnd};
use super::server::Shared;

/// Scripting over HTTP, for tests in other languages driving the `corvid-mock-upstream`
/// process: `POST /__mock/enqueue` with `{"path","status","body","headers"?}` queues a JSON
/// reply, or with `{"path","sse":[…],"framing"?:"event"}` a stream; `GET /__mock/requests` lists
/// what was received (headers and JSON bodies).
pub(super) fn control(shared: &Shared, command: &str, body: &[u8]) -> Response {
    let json_response = |status: StatusCode, value: Value| {
        let mut response = Response::new(Body::from(value.to_string()));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert("content-type", HeaderValue::from_static("application/json"));
        response
    };
    match command {
        "enqueue" => {
            let Ok(script) = serde_json::from_slice::<Value>(body) else {
                return json_response(StatusCode::BAD_REQUEST, json!({"error": "expected JSON"}));
            };
            let path = script["path"]
                .as_str()
                .unwrap_or("/v1/chat/completions")
                .to_owned();
            let status = script["status"]
                .as_u64()
                .and_then(|code| StatusCode::from_u16(u16::try_from(code).ok()?).ok())
                .unwrap_or(StatusCode::OK);
            let headers = script["headers"]
                .as_object()
                .map(|map| {
                    map.iter()
                        .map(|(name, value)| {
                            (name.clone(), value.as_str().unwrap_or_default().to_owned())
                        })
                        .collect()
                })
                .unwrap_or_default();
            let reply = match script["sse"].as_array() {
                // A stream: each item is an event (object) or a raw data string like "[DONE]";
                // `"framing": "event"` adds `event: <type>` lines (Anthropic, Responses).
                Some(events) => {
                    let with_event_lines = script["framing"] == "event";
                    // `"delay_ms"`: a pause before each event (a model that streams slowly).
                    let delay = Duration::from_millis(script["delay_ms"].as_u64().unwrap_or(0));
                    let chunks = events
                        .iter()
                        .map(|event| {
                            let data = match event {
                                Value::String(raw) => raw.clone(),
                                other => other.to_string(),
                            };
                            let text = match event["type"].as_str() {
                                Some(kind) if with_event_lines => {
                                    format!("event: {kind}\ndata: {data}\n\n")
                                }
                                _ => format!("data: {data}\n\n"),
                            };
                            (delay, Bytes::from(text))
                        })
                        .collect();
                    Reply::Stream {
                        chunks,
                        end: StreamEnd::Finish,
                    }
                }
                None => Reply::Json {
                    status,
                    body: script["body"].clone(),
                    headers,
                },
            };
            shared
                .queues
                .lock()
                .entry(path)
                .or_default()
                .push_back(reply);
            json_response(StatusCode::OK, json!({"queued": true}))
        }
        "requests" => {
            let recorded: Vec<Value> = shared.recorded.lock()
                .iter()
                .map(|request| {
                    let headers: serde_json::Map<String, Value> = request
                        .headers
                        .iter()
                        .map(|(name, value)| {
                            (name.to_string(), Value::from(value.to_str().unwrap_or_default()))
                        })
                        .collect();
                    json!({"method": request.method, "path": request.path, "headers": headers, "body": request.json()})
                })
                .collect();
            json_response(StatusCode::OK, Value::from(recorded))
        }
        _ => json_response(
            StatusCode::NOT_FOUND,
            json!({"error": "unknown mock command"}),
        ),
    }
}
