//! corvid-wire owns the canonical LLM wire model, the API dialect codecs, SSE framing and FIM
//! (fill-in-the-middle) prompt handling.
//!
//! The crate is pure: no IO, no async runtime, no HTTP client, no clock.

pub mod fim;
pub mod model;
pub mod sse;
