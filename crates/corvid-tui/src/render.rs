//! Turning agent output into styled terminal lines: markdown (with a small code highlighter),
//! coloured diffs, one-line tool calls and the status line. Pure functions, so frames can be
//! snapshot-tested without a terminal.

mod code;
mod counts;
mod diff;
mod lines;
mod markdown;
mod status;
mod table;
mod tool;

pub use code::code_block;
pub use counts::{bytes, plural, tokens};
pub use diff::diff;
pub use lines::{plain, wrap};
pub use markdown::{markdown, markdown_within};
pub use status::{Status, status_line};
pub use tool::tool_line;

#[cfg(test)]
mod tests;
