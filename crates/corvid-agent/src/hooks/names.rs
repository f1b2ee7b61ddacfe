//! Claude Code's names for corvid's tools, so a hook's matcher written for Claude Code
//! (`Bash`, `Edit|Write`, `mcp__github__.*`) matches the same calls here, and the event a hook
//! reads names the tool as Claude Code would.

use regex::Regex;

/// corvid's built-in tool names and Claude Code's for the same tool.
const CLAUDE_NAMES: [(&str, &str); 10] = [
    ("bash", "Bash"),
    ("edit", "Edit"),
    ("write", "Write"),
    ("read", "Read"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("web_fetch", "WebFetch"),
    ("web_search", "WebSearch"),
    ("todowrite", "TodoWrite"),
    ("task", "Task"),
];

/// The name a hook sees for corvid's `tool`: Claude Code's where it has one (MCP tools are
/// already `mcp__server__tool` in both), else corvid's own.
pub(crate) fn claude_name(tool: &str) -> &str {
    CLAUDE_NAMES
        .iter()
        .find(|(corvid, _)| *corvid == tool)
        .map_or(tool, |(_, claude)| claude)
}

/// A hook group's matcher, as Claude Code reads it: empty or `*` matches every tool; otherwise a
/// regular expression over the whole tool name (so `Edit|Write` is two names, `mcp__.*` every
/// MCP tool). corvid's own name matches too (`bash` as well as `Bash`).
#[derive(Debug, Clone)]
pub(crate) enum ToolMatcher {
    Any,
    Pattern(Regex),
}

/// A hook group's `matcher` that is not a valid regular expression.
#[derive(Debug, thiserror::Error)]
#[error("the matcher `{matcher}` is not a valid expression ({source})")]
pub(crate) struct BadMatcher {
    matcher: String,
    source: regex::Error,
}

impl ToolMatcher {
    /// The matcher for `text`, or why it is not a valid expression.
    pub(crate) fn parse(text: &str) -> Result<Self, BadMatcher> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Self::Any);
        }
        Regex::new(&format!("^(?:{text})$"))
            .map(Self::Pattern)
            .map_err(|source| BadMatcher {
                matcher: text.to_owned(),
                source,
            })
    }

    pub(crate) fn matches(&self, tool: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Pattern(pattern) => pattern.is_match(claude_name(tool)) || pattern.is_match(tool),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_matchers_match_corvid_tools() {
        let matcher = |text: &str| ToolMatcher::parse(text).unwrap();
        assert!(matcher("Bash").matches("bash"));
        assert!(!matcher("Bash").matches("bash_extra"));
        assert!(matcher("Edit|Write").matches("write"));
        assert!(!matcher("Edit|Write").matches("read"));
        assert!(matcher("").matches("anything"));
        assert!(matcher("*").matches("grep"));
        assert!(matcher("mcp__github__.*").matches("mcp__github__create_issue"));
        assert!(!matcher("mcp__github__.*").matches("mcp__gitlab__create_issue"));
        assert!(matcher("WebFetch").matches("web_fetch"));
        assert!(matcher("bash").matches("bash"));
        assert!(ToolMatcher::parse("Edit(").is_err());
        assert_eq!(claude_name("glob"), "Glob");
        assert_eq!(claude_name("mcp__x__y"), "mcp__x__y");
    }
}
