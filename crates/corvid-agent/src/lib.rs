//! The coding agent: one engine, one protocol. Front ends send `corvid_protocol::Op`s and
//! receive `corvid_protocol::Event`s; the engine runs the loop (context → one streamed model
//! step → tools through the approval gate → results fed back → repeat), subagents, project
//! instructions (AGENTS.md) and skills, and keeps conversations in the store.

mod checkpoint;
mod compaction;
mod emitter;
mod engine;
mod history;
pub mod init;
pub mod instructions;
mod ledger;
mod model;
mod paths;
mod persist;
pub mod project;
mod prompt;
mod sandbox_state;
pub mod skills;
mod skills_tool;
mod step_cap;
mod subagent;
mod turn;

pub use compaction::DEFAULT_CONTEXT_WINDOW;
pub use engine::{AgentConfig, AgentError, AgentHandle};
pub use history::repair as repair_history;
pub use model::{EventStream, ModelClient, ModelError, ModelRoute, StreamFuture, next_action};
pub use project::{ProjectFolders, find_project_root, project_folders};
