//! How large a model's context window is, for the agent's compaction: the configured value
//! (`[context_windows]`, then `context_window`), then the provider's own model list where it
//! states a limit (Zed's `/models` does), then the built-in family table below. `None` when
//! nothing knows; the agent then uses its default. A model the family table lacks takes the input
//! limit of the catalog shipped with corvid (`corvid_config::catalog`).
//!
//! The family table is the one place corvid keeps vendor sizes. It holds the input limit (what
//! a request may carry), which for some vendors is smaller than the advertised "context window"
//! that also counts the output. Where a family's members differ, the entry is the smallest, so
//! corvid compacts early rather than overflows.

use crate::registry::Registry;

/// Where a context window came from, for `corvid models`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// `[context_windows]` or `context_window` in config.toml.
    Configured,
    /// The provider's own model list.
    Provider,
    /// The built-in family table.
    Family,
}

impl WindowSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Configured => "configured",
            Self::Provider => "provider",
            Self::Family => "catalog",
        }
    }
}

/// A model's context window in tokens and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    pub tokens: u64,
    pub source: WindowSource,
}

/// Model-name prefixes and their input limits; the longest matching prefix wins. Sources
/// (vendors' model pages as mirrored by gateways, read 2026-12): xAI lists grok-4 at 256K,
/// grok-4-fast and grok-4.1-fast at 2M, grok-4.3 and grok-4.20 at 1M, grok-4.5 at 500K,
/// grok-code-fast-1 at 256K, grok-3 at 131,072; Anthropic lists every Claude model at 200K
/// (1M only behind a beta header corvid does not send); OpenAI lists gpt-5, 5.1 and 5.2 at 400K
/// of which 128K is output (so 272K input), gpt-5.4 at 1.05M of which 922K input, gpt-4.1 at
/// 1,047,576, gpt-4o at 128K, o3 and o4-mini at 200K; Google lists gemini-2.5 (pro, flash,
/// flash-lite) at 1,048,576 input tokens.
const FAMILIES: &[(&str, u64)] = &[
    ("grok-3", 131_072),
    ("grok-4", 256_000),
    ("grok-4-fast", 2_000_000),
    ("grok-4-1-fast", 2_000_000),
    ("grok-4.1-fast", 2_000_000),
    ("grok-4.20", 1_000_000),
    ("grok-4.3", 1_000_000),
    ("grok-4.5", 500_000),
    ("grok-code-fast", 256_000),
    ("claude-", 200_000),
    ("gpt-4o", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 272_000),
    ("gpt-5.4", 922_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini-2.5", 1_048_576),
];

/// The family table's window for `model` (a bare upstream name; a `models/` prefix is
/// ignored), or `None` for a family it does not hold.
pub fn family_window(model: &str) -> Option<u64> {
    let model = model.trim().to_ascii_lowercase();
    let model = model.strip_prefix("models/").unwrap_or(&model);
    FAMILIES
        .iter()
        .filter(|(prefix, _)| model.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, tokens)| *tokens)
}

impl Registry {
    /// The context window of the model a user calls `requested` (alias, `provider/model` or a
    /// bare name), in the order of the module docs. A provider's list counts once it has been
    /// read (`Provider::models`, or the first request to a Zed model).
    pub fn context_window(&self, requested: &str) -> Option<ContextWindow> {
        let route = self.lead(requested).ok();
        let upstream = route
            .as_ref()
            .map(|route| (route.provider.name(), route.model.as_str()));
        if let Some(tokens) = self
            .windows()
            .configured_context_window(requested, upstream)
        {
            return Some(ContextWindow {
                tokens,
                source: WindowSource::Configured,
            });
        }
        if let Some(route) = &route
            && let Some(tokens) = route.provider.listed_window(&route.model)
        {
            return Some(ContextWindow {
                tokens,
                source: WindowSource::Provider,
            });
        }
        let model = self.upstream_name(requested, route.as_ref());
        family_window(&model)
            .or_else(|| corvid_config::catalog().model(&model)?.input_limit())
            .map(|tokens| ContextWindow {
                tokens,
                source: WindowSource::Family,
            })
    }

    /// The name the provider takes for `requested`: the route's model, or without a route (the
    /// provider is not set up) the name itself, aliases resolved and a provider prefix taken
    /// off — it still tells the family.
    pub(crate) fn upstream_name(&self, requested: &str, route: Option<&crate::Route>) -> String {
        match route {
            Some(route) => route.model.clone(),
            None => {
                let name = self.windows().resolve_model(requested);
                let bare = name
                    .split_once('/')
                    .filter(|(prefix, _)| self.provider(prefix).is_some());
                bare.map_or(name, |(_, model)| model).to_owned()
            }
        }
    }
}

#[cfg(test)]
mod tests;
