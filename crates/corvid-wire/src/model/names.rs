use std::collections::HashMap;

use crate::model::Tool;

/// The longest tool name OpenAI accepts (`^[a-zA-Z0-9_-]{1,64}$`).
pub const MAX_TOOL_NAME: usize = 64;

/// Tool names as one dialect can carry them, and the way back.
///
/// Claude Code's MCP tools (`mcp__server__tool`) can exceed OpenAI's 64 characters or use
/// characters it refuses. Encoders send [`NameMap::wire`] names; decoders of the reply turn them
/// back with [`NameMap::original`]. Shortening is deterministic, so the same name maps the same
/// way on every turn without shared state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameMap {
    to_original: HashMap<String, String>,
}

impl NameMap {
    /// The map for a request's tools.
    pub fn new(tools: &[Tool]) -> Self {
        let to_original = tools
            .iter()
            .filter_map(|tool| {
                let wire = wire_name(&tool.name);
                (wire != tool.name).then(|| (wire, tool.name.clone()))
            })
            .collect();
        Self { to_original }
    }

    /// The name to send for `name`.
    pub fn wire(&self, name: &str) -> String {
        wire_name(name)
    }

    /// [`NameMap::wire`], borrowing `name` when it is sent as it is (the usual case).
    pub fn wire_ref<'a>(&self, name: &'a str) -> std::borrow::Cow<'a, str> {
        if fits(name) {
            std::borrow::Cow::Borrowed(name)
        } else {
            std::borrow::Cow::Owned(wire_name(name))
        }
    }

    /// The original name for a name the upstream used.
    pub fn original(&self, wire: &str) -> String {
        self.to_original
            .get(wire)
            .cloned()
            .unwrap_or_else(|| wire.to_owned())
    }
}

/// `name` if OpenAI accepts it; a namespaced name (`collaboration.spawn_agent`, see
/// `openai_responses`) with `__` for the dot when that fits; otherwise its allowed characters
/// (others become `_`), cut to leave room for `_` and 8 hex digits of a hash of the full name.
pub fn wire_name(name: &str) -> String {
    if fits(name) {
        return name.to_owned();
    }
    if let Some((namespace, tool)) = name.split_once('.') {
        let flat = format!("{namespace}__{tool}");
        if !namespace.is_empty() && !tool.is_empty() && fits(&flat) {
            return flat;
        }
    }
    let cleaned: String = name
        .chars()
        .map(|c| if valid(c) { c } else { '_' })
        .collect();
    let keep = MAX_TOOL_NAME - 9;
    let prefix: String = cleaned.chars().take(keep).collect();
    format!("{prefix}_{:08x}", fnv1a(name.as_bytes()) as u32)
}

/// A character OpenAI accepts in a tool name.
fn valid(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether OpenAI accepts `name` as a tool name.
fn fits(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_TOOL_NAME && name.chars().all(valid)
}

/// FNV-1a, 64-bit: stable across runs and platforms (unlike std's hasher).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A deterministic tool-call id for a call that has none (Gemini), from what identifies it.
pub fn synthetic_call_id(name: &str, arguments: &str, position: usize) -> String {
    let mut seed = Vec::with_capacity(name.len() + arguments.len() + 8);
    seed.extend_from_slice(name.as_bytes());
    seed.push(0);
    seed.extend_from_slice(arguments.as_bytes());
    seed.extend_from_slice(&position.to_le_bytes());
    format!("call_{:016x}", fnv1a(&seed))
}

/// An id made safe for Anthropic (`^[a-zA-Z0-9_-]+$`): other characters become `_`. The same
/// input always gives the same output, so a call and its result stay paired.
pub fn anthropic_safe_id(id: &str) -> String {
    if id.is_empty() {
        return "toolu_empty".to_owned();
    }
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn tool(name: &str) -> Tool {
        Tool {
            name: name.to_owned(),
            description: None,
            parameters: json!({}).into(),
            strict: None,
        }
    }

    #[test]
    fn long_and_odd_names_round_trip() {
        let long = format!("mcp__{}__tool", "a".repeat(85));
        let dotted = "my.tool.x";
        let names = NameMap::new(&[tool(&long), tool(dotted), tool("read_file")]);
        let wire = names.wire(&long);
        assert_eq!(wire.len(), MAX_TOOL_NAME);
        assert_eq!(names.original(&wire), long);
        assert_eq!(
            names.wire(dotted),
            format!("my_tool_x_{:08x}", fnv1a(b"my.tool.x") as u32)
        );
        assert_eq!(names.original(&names.wire(dotted)), dotted);
        assert_eq!(names.wire("read_file"), "read_file");
        assert_eq!(names.original("read_file"), "read_file");
        assert_eq!(wire_name(&long), wire, "stable");
        // A namespaced tool (Codex's `namespace` tools) reads as `namespace__tool`.
        let namespaced = "collaboration.spawn_agent";
        let names = NameMap::new(&[tool(namespaced)]);
        assert_eq!(names.wire(namespaced), "collaboration__spawn_agent");
        assert_eq!(names.original("collaboration__spawn_agent"), namespaced);
    }

    #[test]
    fn ids() {
        assert_eq!(anthropic_safe_id("call_1.2:3"), "call_1_2_3");
        assert_eq!(anthropic_safe_id("toolu_ok-1"), "toolu_ok-1");
        let a = synthetic_call_id("read", "{}", 0);
        assert_eq!(a, synthetic_call_id("read", "{}", 0));
        assert_ne!(a, synthetic_call_id("read", "{}", 1));
        assert!(a.starts_with("call_"));
    }
}
