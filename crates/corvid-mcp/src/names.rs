//! The names MCP tools go by for the model: `mcp__<server>__<tool>`, made to fit the strictest
//! provider rule (OpenAI's `^[a-zA-Z0-9_-]{1,64}$`; Gemini also wants a letter or `_` first,
//! which the `mcp__` prefix gives), and the way back to the server and its own tool name.
//!
//! Characters outside `[A-Za-z0-9_-]` become `_`. A name that is too long, or that is already
//! taken (by a built-in tool, which always wins, or by another MCP tool that cleaned to the same
//! text), is cut and given `_` and eight hex digits of a hash of the server and tool names, so
//! it stays the same from turn to turn. Lookups go through the table, never by splitting on
//! `__`, so server or tool names holding `__` map back exactly.

use std::collections::HashSet;

/// What every MCP tool name starts with (Codex's and Claude Code's convention).
pub const PREFIX: &str = "mcp__";
/// The longest tool name every provider accepts.
pub const MAX_NAME: usize = 64;

/// One MCP tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedTool {
    /// The name the model calls.
    pub name: String,
    /// The server's configured name.
    pub server: String,
    /// The server's own name for the tool.
    pub tool: String,
}

/// The outcome of naming: the tools offered, in order, and those left out by the cap.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Naming {
    pub offered: Vec<NamedTool>,
    /// `(server, tool)` pairs beyond the cap, in the order they would have come.
    pub left_out: Vec<(String, String)>,
}

impl Naming {
    /// The server and tool behind a name the model called.
    pub fn resolve(&self, name: &str) -> Option<&NamedTool> {
        self.offered.iter().find(|tool| tool.name == name)
    }
}

/// Names `tools` (`(server, tool)` pairs, in the order they should be offered), keeping at most
/// `cap`; `taken` says whether a name belongs to a built-in tool.
pub fn assign(tools: &[(String, String)], cap: usize, taken: &dyn Fn(&str) -> bool) -> Naming {
    let mut naming = Naming::default();
    let mut used: HashSet<String> = HashSet::new();
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    for (server, tool) in tools {
        // A server listing one tool twice offers it once.
        if !seen.insert((server.as_str(), tool.as_str())) {
            continue;
        }
        if naming.offered.len() >= cap {
            naming.left_out.push((server.clone(), tool.clone()));
            continue;
        }
        let plain = format!("{PREFIX}{}__{}", clean(server), clean(tool));
        let free = |name: &str, used: &HashSet<String>| !used.contains(name) && !taken(name);
        let name = if plain.len() <= MAX_NAME && free(&plain, &used) {
            plain
        } else {
            let hashed = hashed(&plain, server, tool);
            if !free(&hashed, &used) {
                // Two different pairs with the same 32-bit hash and the same cleaned prefix:
                // leave the later one out rather than call the wrong tool.
                naming.left_out.push((server.clone(), tool.clone()));
                continue;
            }
            hashed
        };
        used.insert(name.clone());
        naming.offered.push(NamedTool {
            name,
            server: server.clone(),
            tool: tool.clone(),
        });
    }
    naming
}

/// `[A-Za-z0-9_-]` kept, everything else `_`.
fn clean(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `plain` cut to leave room for `_` and eight hex digits of a hash of the raw names.
fn hashed(plain: &str, server: &str, tool: &str) -> String {
    let mut seed = Vec::with_capacity(server.len() + tool.len() + 1);
    seed.extend_from_slice(server.as_bytes());
    seed.push(0);
    seed.extend_from_slice(tool.as_bytes());
    // `plain` is ASCII, so any byte index is a character boundary.
    let keep = plain.len().min(MAX_NAME - 9);
    format!("{}_{:08x}", &plain[..keep], fnv1a(&seed) as u32)
}

/// FNV-1a, 64-bit: the same on every run and platform (std's hasher is seeded per process).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests;
