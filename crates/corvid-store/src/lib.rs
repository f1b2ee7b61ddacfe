//! corvid's embedded store: one SQLite file (`<data_dir>/corvid.db`) holding the usage ledger /
//! request log, and the agent's conversations (several per project, their messages, usage per
//! step).
//!
//! - [`Store`] opens (and migrates) the database and answers queries. It wraps one
//!   `rusqlite::Connection`, so it is `Send` but not `Sync`: give each thread its own `Store`
//!   (WAL mode lets readers run while a writer writes).
//! - [`SharedStore`] is the one store of a process (`corvid serve`: the gateway's ledger writer,
//!   the agent's sessions and the page's reports), one connection behind a mutex.
//! - [`ConversationStore`] is what the agent keeps (conversations, messages, checkpoints, its
//!   ledger rows), on [`Store`] or on PostgreSQL ([`pg::PgConversations`]) in team mode;
//!   [`SharedConversations`] is the process's one, and a [`SharedStore`] coerces to it.
//! - [`UsageRecorder`] is the gateway's hot-path handle: `record` hands a [`UsageRecord`] to one
//!   background writer thread and never blocks; the thread batches inserts into transactions.
//! - [`cost`] prices a [`Tokens`] split with a [`corvid_config::Price`].
//!
//! The store never decides what to log: a prompt is stored only when the caller puts one in
//! [`UsageRecord::prompt`].

mod agent_store;
mod checkpoints;
mod conversations;
mod error;
mod migrations;
mod money;
pub mod pg;
mod recorder;
mod store;
pub mod team;
mod usage;

pub use agent_store::{ConversationStore, SharedConversations};
pub use checkpoints::CheckpointRecord;
pub use conversations::{ConversationSummary, StoredMessage};
/// The price of a model, as `[prices]` in config.toml sets it (what [`cost`] multiplies by).
pub use corvid_config::Price;
pub use error::StoreError;
pub use money::{PriceMicros, micros_to_usd, usd_to_micros};
pub use recorder::{RecorderOptions, RecorderStats, UsageRecorder};
pub use store::{SharedStore, Store};
pub use usage::{
    Billing, FRONT_END_GATEWAY, Outcome, ROUTE_AGENT, Tokens, UsageRecord, UsageRow, UsageTotals,
    cost, now_ms, price_of, priced,
};
