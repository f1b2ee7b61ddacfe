//! Where an event belongs (`Scope`): the engine emits through the session's `Journal` directly.

/// Where an event belongs: the submission it answers, and for subagents their depth and the
/// `task` call that started them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    pub(crate) id: String,
    pub(crate) depth: u32,
    pub(crate) parent_call_id: Option<String>,
}
