//! A mock OpenAI-compatible upstream (xAI's shape): `/v1/chat/completions`, `/v1/responses`.
//!
//! Replies are scripted per path as a FIFO queue; with an empty queue it answers a small valid
//! reply (streamed when the request asked for `"stream": true`). Every request is recorded, and
//! every scripted stream counts whether the client stayed until its end.

mod control;
mod defaults;
mod fixtures;
mod handler;
mod recorded;
mod render;
mod reply;
mod server;
mod stream_guard;

pub use fixtures::{
    anthropic_events, anthropic_json, anthropic_stream, chat_json, chat_stream, gemini_json,
    gemini_stream, responses_json, responses_stream,
};
pub use recorded::Recorded;
pub use reply::{Reply, StreamEnd, StreamFeed};
pub use server::MockUpstream;
