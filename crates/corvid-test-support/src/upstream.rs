//! A mock OpenAI-compatible upstream (xAI's shape): `/v1/chat/completions`, `/v1/responses`.
//!
//! Replies are scripted per path as a FIFO queue; with an empty queue it answers a small valid
//! reply (streamed when the request asked for `"stream": true`). Every request is recorded, and
//! every scripted stream counts whether the client stayed until its end.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug)]
pub enum Reply {
    /// A complete response with a JSON body.
    Json {
        status: StatusCode,
        body: Value,
        headers: Vec<(String, String)>,
    },
    /// A `text/event-stream` response written piece by piece, each after its delay.
    Stream {
        chunks: Vec<(Duration, Bytes)>,
        end: StreamEnd,
    },
    /// A `text/event-stream` response whose pieces the test releases one by one through the
    /// [`StreamFeed`] returned by [`Reply::fed`]; dropping the feed ends the body cleanly.
    Fed(tokio::sync::mpsc::UnboundedReceiver<Bytes>),
    /// Accept the request and never answer (no status line either).
    Hang,
}

/// The test's end of a [`Reply::Fed`] stream.
#[derive(Debug, Clone)]
pub struct StreamFeed(tokio::sync::mpsc::UnboundedSender<Bytes>);

impl StreamFeed {
    /// Sends one piece of the body now; false when the client already went away.
    pub fn send(&self, bytes: &str) -> bool {
        self.0.send(Bytes::from(bytes.to_owned())).is_ok()
    }

    /// Sends `data: <event>` and a blank line.
    pub fn event(&self, event: &str) -> bool {
        self.send(&format!("data: {event}\n\n"))
    }
}

/// How a scripted stream ends after its last chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// A normal end of body.
    Finish,
    /// The connection breaks without finishing the body.
    Abort,
}

impl Reply {
    /// 200 with this JSON body.
    pub fn ok(body: Value) -> Self {
        Self::status(StatusCode::OK, body)
    }

    /// This status with this JSON body.
    pub fn status(status: StatusCode, body: Value) -> Self {
        Self::Json {
            status,
            body,
            headers: Vec::new(),
        }
    }

    /// Adds a response header (e.g. `Retry-After`) to a JSON reply.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let Self::Json { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// A stream the test feeds piece by piece.
    pub fn fed() -> (StreamFeed, Self) {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        (StreamFeed(sender), Self::Fed(receiver))
    }

    /// An SSE stream of `data:` events, each sent `gap` after the previous one, ending cleanly.
    pub fn sse(events: &[&str], gap: Duration) -> Self {
        let chunks = events
            .iter()
            .map(|event| (gap, Bytes::from(format!("data: {event}\n\n"))))
            .collect();
        Self::Stream {
            chunks,
            end: StreamEnd::Finish,
        }
    }
}

/// What the mock received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Recorded {
    /// The body as JSON (panics in tests when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

#[derive(Default)]
struct Shared {
    queues: Mutex<HashMap<String, VecDeque<Reply>>>,
    recorded: Mutex<Vec<Recorded>>,
    streams_completed: AtomicUsize,
    streams_abandoned: AtomicUsize,
}

/// A running mock upstream; it stops when dropped.
pub struct MockUpstream {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _server: crate::ServerGuard,
}

impl MockUpstream {
    /// Starts on `127.0.0.1:0`.
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let app = Router::new().fallback(answer).with_state(shared.clone());
        let (addr, server) = crate::serve(app).await;
        Self {
            addr,
            shared,
            _server: server,
        }
    }

    /// `http://127.0.0.1:<port>/v1`, the value for corvid's `upstream` setting.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues a reply for `path` (e.g. `/v1/chat/completions`).
    pub fn enqueue(&self, path: &str, reply: Reply) {
        self.shared
            .queues
            .lock()
            .entry(path.to_owned())
            .or_default()
            .push_back(reply);
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.recorded.lock().clone()
    }

    /// Scripted streams the client read to the end.
    pub fn streams_completed(&self) -> usize {
        self.shared.streams_completed.load(Ordering::SeqCst)
    }

    /// Scripted streams dropped before their end because the client went away.
    pub fn streams_abandoned(&self) -> usize {
        self.shared.streams_abandoned.load(Ordering::SeqCst)
    }
}

async fn answer(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let path = parts.uri.path().to_owned();
    if let Some(command) = path.strip_prefix("/__mock/") {
        return control(&shared, command, &body);
    }
    shared.recorded.lock().push(Recorded {
        method: parts.method.to_string(),
        path: path.clone(),
        headers: parts.headers.clone(),
        body: body.clone(),
    });
    let scripted = shared
        .queues
        .lock()
        .get_mut(&path)
        .and_then(VecDeque::pop_front);
    let reply = scripted.unwrap_or_else(|| default_reply(&path, &body));
    if let Reply::Hang = reply {
        // Never answer, not even the status line.
        std::future::pending::<()>().await;
    }
    render(reply, shared)
}

/// Scripting over HTTP, for tests in other languages driving the `corvid-mock-upstream`
/// process: `POST /__mock/enqueue` with `{"path","status","body","headers"?}` queues a JSON
/// reply, or with `{"path","sse":[…],"framing"?:"event"}` a stream; `GET /__mock/requests` lists
/// what was received (headers and JSON bodies).
fn control(shared: &Shared, command: &str, body: &[u8]) -> Response {
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

fn render(reply: Reply, shared: Arc<Shared>) -> Response {
    match reply {
        Reply::Json {
            status,
            body,
            headers,
        } => {
            let mut response = Response::new(Body::from(body.to_string()));
            *response.status_mut() = status;
            let map = response.headers_mut();
            map.insert("content-type", HeaderValue::from_static("application/json"));
            for (name, value) in headers {
                if let (Ok(name), Ok(value)) = (
                    http::HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(&value),
                ) {
                    map.insert(name, value);
                }
            }
            response
        }
        Reply::Stream { chunks, end } => {
            let guard = StreamGuard {
                shared,
                finished: false,
            };
            let stream = futures_util::stream::unfold(
                (chunks.into_iter(), guard, end),
                |(mut chunks, mut guard, end)| async move {
                    match chunks.next() {
                        Some((delay, bytes)) => {
                            tokio::time::sleep(delay).await;
                            Some((Ok(bytes), (chunks, guard, end)))
                        }
                        None => {
                            guard.mark_finished();
                            match end {
                                StreamEnd::Finish => None,
                                StreamEnd::Abort => {
                                    // Let the chunks written so far reach the client first.
                                    tokio::time::sleep(Duration::from_millis(50)).await;
                                    Some((
                                        Err(std::io::Error::other("scripted abort")),
                                        (chunks, guard, StreamEnd::Finish),
                                    ))
                                }
                            }
                        }
                    }
                },
            );
            let mut response = Response::new(Body::from_stream(stream));
            response.headers_mut().insert(
                "content-type",
                HeaderValue::from_static("text/event-stream"),
            );
            response
        }
        Reply::Fed(receiver) => {
            let guard = StreamGuard {
                shared,
                finished: false,
            };
            let stream = futures_util::stream::unfold(
                (receiver, guard),
                |(mut receiver, mut guard)| async move {
                    match receiver.recv().await {
                        Some(bytes) => Some((Ok::<_, std::io::Error>(bytes), (receiver, guard))),
                        None => {
                            guard.mark_finished();
                            None
                        }
                    }
                },
            );
            let mut response = Response::new(Body::from_stream(stream));
            response.headers_mut().insert(
                "content-type",
                HeaderValue::from_static("text/event-stream"),
            );
            response
        }
        Reply::Hang => Response::new(Body::empty()),
    }
}

/// Counts a stream as completed or abandoned when the server drops it.
struct StreamGuard {
    shared: Arc<Shared>,
    finished: bool,
}

impl StreamGuard {
    fn mark_finished(&mut self) {
        self.finished = true;
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let counter = if self.finished {
            &self.shared.streams_completed
        } else {
            &self.shared.streams_abandoned
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

/// A valid reply for a request nobody scripted: chat or responses, streamed or not.
fn default_reply(path: &str, body: &[u8]) -> Reply {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let model = request["model"].as_str().unwrap_or("mock-model").to_owned();
    let stream = request["stream"].as_bool().unwrap_or(false);
    if path.ends_with("/responses") {
        return if stream {
            responses_stream(&model, "Hello from the mock.")
        } else {
            Reply::ok(responses_json(&model, "Hello from the mock."))
        };
    }
    if path.ends_with("/messages/count_tokens") {
        return Reply::ok(json!({"input_tokens": 42}));
    }
    if path.ends_with("/messages") {
        return if stream {
            anthropic_stream(&model, &["Hello", " from", " the mock."])
        } else {
            Reply::ok(anthropic_json(&model, "Hello from the mock."))
        };
    }
    if let Some((_, method)) = path.rsplit_once(':') {
        let gemini_model = path
            .rsplit_once("/models/")
            .and_then(|(_, rest)| rest.split_once(':'))
            .map(|(model, _)| model.to_owned())
            .unwrap_or_else(|| model.clone());
        if method.starts_with("streamGenerateContent") {
            return gemini_stream(&gemini_model, &["Hello", " from", " the mock."]);
        }
        if method.starts_with("generateContent") {
            return Reply::ok(gemini_json(&gemini_model, "Hello from the mock."));
        }
    }
    if path.ends_with("/models") {
        return Reply::ok(json!({
            "object": "list",
            "data": [
                {"id": "grok-4.6", "object": "model", "created": 0, "owned_by": "mock"},
                {"id": "mock-extra-model", "object": "model", "created": 0, "owned_by": "mock"}
            ]
        }));
    }
    if path.ends_with("/chat/completions") {
        return if stream {
            chat_stream(&model, &["Hello", " from", " the mock."])
        } else {
            Reply::ok(chat_json(&model, "Hello from the mock."))
        };
    }
    Reply::status(
        StatusCode::NOT_FOUND,
        json!({"code": "not_found", "error": format!("no route {path}")}),
    )
}

/// A non-streamed chat completion.
pub fn chat_json(model: &str, text: &str) -> Value {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": 1_750_000_000,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
    })
}

/// A streamed chat completion in xAI's shape: role, text pieces, finish, usage with
/// `choices: []`, `[DONE]`.
pub fn chat_stream(model: &str, pieces: &[&str]) -> Reply {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1_750_000_000,
            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
        })
        .to_string()
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    events.extend(
        pieces
            .iter()
            .map(|piece| chunk(json!({"content": piece}), Value::Null)),
    );
    events.push(chunk(json!({}), json!("stop")));
    events.push(
        json!({
            "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1_750_000_000,
            "model": model, "choices": [],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
        })
        .to_string(),
    );
    events.push("[DONE]".to_owned());
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    Reply::sse(&refs, Duration::ZERO)
}

/// A non-streamed Responses API reply.
pub fn responses_json(model: &str, text: &str) -> Value {
    json!({
        "id": "resp_mock",
        "object": "response",
        "created_at": 1_750_000_000,
        "status": "completed",
        "model": model,
        "output": [{
            "type": "message", "id": "msg_mock", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]
        }],
        "usage": {"input_tokens": 20, "output_tokens": 4, "total_tokens": 24}
    })
}

/// A streamed Responses API reply (created, one text delta, completed).
pub fn responses_stream(model: &str, text: &str) -> Reply {
    let done = responses_json(model, text);
    let events = [
        json!({"type": "response.created", "sequence_number": 0,
               "response": {"id": "resp_mock", "object": "response", "created_at": 1_750_000_000,
                             "status": "in_progress", "model": model, "output": []}}),
        json!({"type": "response.output_text.delta", "sequence_number": 1, "item_id": "msg_mock",
               "output_index": 0, "content_index": 0, "delta": text}),
        json!({"type": "response.completed", "sequence_number": 2, "response": done}),
    ];
    let chunks = events
        .iter()
        .map(|event| {
            let kind = event["type"].as_str().unwrap_or_default();
            (
                Duration::ZERO,
                Bytes::from(format!("event: {kind}\ndata: {event}\n\n")),
            )
        })
        .collect();
    Reply::Stream {
        chunks,
        end: StreamEnd::Finish,
    }
}

/// A non-streamed Anthropic message.
pub fn anthropic_json(model: &str, text: &str) -> Value {
    json!({
        "id": "msg_mock", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 12, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5}
    })
}

/// A streamed Anthropic message: message_start, one text block, message_delta, message_stop.
pub fn anthropic_stream(model: &str, pieces: &[&str]) -> Reply {
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 12, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}}})];
    events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
    for piece in pieces {
        events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}));
    }
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 5}}));
    events.push(json!({"type": "message_stop"}));
    anthropic_events(&events)
}

/// Anthropic SSE framing (`event:` equal to the data's type) for these events.
pub fn anthropic_events(events: &[Value]) -> Reply {
    let chunks = events
        .iter()
        .map(|event| {
            let kind = event["type"].as_str().unwrap_or_default();
            (
                Duration::ZERO,
                Bytes::from(format!("event: {kind}\ndata: {event}\n\n")),
            )
        })
        .collect();
    Reply::Stream {
        chunks,
        end: StreamEnd::Finish,
    }
}

/// A non-streamed Gemini reply.
pub fn gemini_json(model: &str, text: &str) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17},
        "modelVersion": model
    })
}

/// A streamed Gemini reply (`alt=sse`): one chunk per piece, the last with the finish and usage.
pub fn gemini_stream(model: &str, pieces: &[&str]) -> Reply {
    let last = pieces.len().saturating_sub(1);
    let chunks = pieces
        .iter()
        .enumerate()
        .map(|(index, piece)| {
            let mut chunk = json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}],
                "modelVersion": model
            });
            if index == last {
                chunk["candidates"][0]["finishReason"] = json!("STOP");
                chunk["usageMetadata"] = json!({"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17});
            }
            (Duration::ZERO, Bytes::from(format!("data: {chunk}\n\n")))
        })
        .collect();
    Reply::Stream {
        chunks,
        end: StreamEnd::Finish,
    }
}
