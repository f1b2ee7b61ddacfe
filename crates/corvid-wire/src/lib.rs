//! corvid-wire owns the canonical LLM wire model, the API dialect codecs, SSE framing and FIM
//! (fill-in-the-middle) prompt handling.
//!
//! The crate is pure: no IO, no async runtime, no HTTP client, no clock. `CODECS.md` is the
//! contract every dialect module follows; `LOSSES.md` lists what each dialect cannot carry.

pub mod anthropic;
mod borrowed;
pub mod codec;
mod counts;
pub mod crossing;
pub mod encoded;
pub mod fim;
pub mod gemini;
mod json_text;
pub mod minted;
pub mod model;
pub mod openai_chat;
pub mod openai_responses;
#[cfg(test)]
mod repeated_keys;
#[cfg(test)]
mod reply_strategies;
pub mod sse;
pub mod url_path;

pub use codec::Dialect;
