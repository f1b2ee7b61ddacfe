//! A mock Anthropic Messages API that caches prompts by Anthropic's rules, so a test can prove
//! that caching survives corvid: a prompt is cached only up to the `cache_control`
//! breakpoints the request marks, in the order tools → system → messages; a later request
//! whose blocks start with a cached prefix reads it (`cache_read_input_tokens`); what lies
//! between the cached prefix and the last breakpoint is written (`cache_creation_input_tokens`);
//! a prefix shorter than [`MIN_CACHEABLE_TOKENS`] is never cached. Tokens are counted as a
//! quarter of each block's JSON length.

use std::collections::HashSet;
use std::sync::Arc;

use parking_lot::Mutex;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};

/// Anthropic's smallest cacheable prompt for its Sonnet and Opus models.
pub const MIN_CACHEABLE_TOKENS: u64 = 1024;

/// The running mock; it stops when dropped.
pub struct AnthropicCacheMock {
    addr: std::net::SocketAddr,
    usages: Arc<Mutex<Vec<Value>>>,
    _server: crate::ServerGuard,
}

#[derive(Default)]
struct Cache {
    prefixes: Mutex<HashSet<u64>>,
    usages: Arc<Mutex<Vec<Value>>>,
}

impl AnthropicCacheMock {
    pub async fn start() -> Self {
        let cache = Arc::new(Cache::default());
        let usages = Arc::clone(&cache.usages);
        let app = Router::new()
            .route("/v1/messages", post(answer))
            .with_state(cache);
        let (addr, server) = crate::serve(app).await;
        Self {
            addr,
            usages,
            _server: server,
        }
    }

    /// `http://127.0.0.1:<port>/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The `usage` of every reply so far.
    pub fn usages(&self) -> Vec<Value> {
        self.usages.lock().clone()
    }
}

async fn answer(State(cache): State<Arc<Cache>>, Json(request): Json<Value>) -> Json<Value> {
    let blocks = blocks(&request);
    let tokens: Vec<u64> = blocks
        .iter()
        .map(|(text, _)| text.len() as u64 / 4 + 1)
        .collect();
    let total: u64 = tokens.iter().sum();
    // The hash of every prefix, block by block.
    let mut hashes = Vec::with_capacity(blocks.len());
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for (text, _) in &blocks {
        std::hash::Hash::hash(text, &mut hasher);
        hashes.push(std::hash::Hasher::finish(&hasher));
    }
    let prefix_tokens = |end: usize| tokens[..=end].iter().sum::<u64>();
    let breakpoints: Vec<usize> = blocks
        .iter()
        .enumerate()
        .filter(|(_, (_, marked))| *marked)
        .map(|(index, _)| index)
        .collect();
    let mut prefixes = cache.prefixes.lock();
    // The longest cached prefix ending at or before the last breakpoint.
    let last = breakpoints.last().copied();
    let read_end = last.and_then(|last| {
        (0..=last)
            .rev()
            .find(|end| prefixes.contains(&hashes[*end]))
    });
    let read = read_end.map_or(0, prefix_tokens);
    let mut written = 0;
    if let Some(last) = last {
        let cached_through = prefix_tokens(last);
        if cached_through >= MIN_CACHEABLE_TOKENS {
            written = cached_through - read;
            for end in &breakpoints {
                prefixes.insert(hashes[*end]);
            }
        }
    }
    drop(prefixes);
    let usage = json!({
        "input_tokens": total - read - written,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": written,
        "output_tokens": 3,
    });
    cache.usages.lock().push(usage.clone());
    let model = request["model"]
        .as_str()
        .unwrap_or("claude-mock")
        .to_owned();
    Json(json!({
        "id": "msg_cache", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": "Cached or not."}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": usage,
    }))
}

/// The prompt's blocks in cache order (tools, system, message content), each as its JSON
/// without `cache_control`, and whether it carries a breakpoint.
fn blocks(request: &Value) -> Vec<(String, bool)> {
    let mut blocks = Vec::new();
    let mut push = |block: &Value| {
        let marked = block.get("cache_control").is_some();
        let mut plain = block.clone();
        if let Some(object) = plain.as_object_mut() {
            object.remove("cache_control");
        }
        blocks.push((plain.to_string(), marked));
    };
    for tool in request["tools"].as_array().into_iter().flatten() {
        push(tool);
    }
    match &request["system"] {
        Value::String(text) => push(&json!({"type": "text", "text": text})),
        Value::Array(items) => items.iter().for_each(&mut push),
        _ => {}
    }
    for message in request["messages"].as_array().into_iter().flatten() {
        match &message["content"] {
            Value::String(text) => push(&json!({"type": "text", "text": text})),
            Value::Array(items) => items.iter().for_each(&mut push),
            _ => {}
        }
    }
    blocks
}
