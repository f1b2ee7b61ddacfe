//! The coding agent: a session service, one protocol. Front ends send `corvid_protocol::Op`s
//! and receive `corvid_protocol::Event`s; each session's engine runs the loop (context → one
//! streamed model step → tools through the approval gate → results fed back → repeat),
//! subagents, project instructions (AGENTS.md) and skills, and keeps conversations in the store.
//! `Agents` runs many sessions at once over one store and one model client.

mod agents;
mod attention;
mod checkpoint;
pub mod commands;
mod compaction;
mod config;
mod conversation;
mod engine;
mod handle;
mod history;
pub mod hooks;
pub mod images;
pub mod init;
pub mod instructions;
mod journal;
mod ledger;
mod link;
mod model;
pub mod permissions;
mod persist;
mod plan_mode;
pub mod project;
mod prompt;
mod rewind;
mod sandbox_state;
mod scope;
mod session;
pub mod settings_files;
pub mod skills;
mod step_cap;
mod store_work;
mod subagent;
mod tool_facts;
mod tool_progress;
mod tool_view;
mod turn;

pub use agents::{Agents, ConversationDetail, IdleRules, SessionInfo};
pub use attention::{Attention, AttentionFeed, AttentionKind, FaceFocus};
pub use compaction::DEFAULT_CONTEXT_WINDOW;
pub use config::{AgentConfig, AgentError};
pub use conversation::OpenConversation;
pub use handle::{OP_BUFFER, Session};
pub use history::repair as repair_history;
pub use journal::{EVENT_BUFFER, Subscription};
pub use link::{ConfigSource, Link, LinkFrames};
pub use model::{
    EventStream, ModelClient, ModelError, ModelReply, ModelRoute, ReplyFuture, StreamFuture,
    error_class, next_action,
};
pub use project::{ProjectFolders, find_project_root, project_folders};
pub use session::SharedStore;
pub use tool_view::tool_server;
