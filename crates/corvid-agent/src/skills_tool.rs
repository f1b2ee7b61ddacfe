//! The `skill` tool: the model sees skills by name and description in the system prompt and
//! loads one's full instructions on demand.

use corvid_wire::model::Tool;

use crate::engine::Shared;

pub(crate) fn tool(shared: &Shared) -> Tool {
    shared.skills.tool()
}
