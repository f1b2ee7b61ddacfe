//! Routing: named routes with ordered fallback targets, and task rules that pick a target
//! from the shape of a request (claude-code-router's `Router`, in corvid's config).
//!
//! ```toml
//! [routes.sonnet]
//! targets = ["anthropic/claude-sonnet-4-5", "zed/claude-sonnet-4-6", "openrouter/anthropic/claude-sonnet-4.5"]
//!
//! [router]
//! background = "xai/grok-4-fast-non-reasoning"  # Claude Code's small/fast (haiku) calls
//! think = "sonnet"                               # thinking requested
//! long_context = "gemini/gemini-2.5-pro"         # estimated prompt above the threshold
//! long_context_threshold = 60000
//! image = "openai/gpt-5"                         # an image in the conversation
//! web_search = "xai/grok-4.6"                    # a web search tool offered
//! failover_deadline_s = 60                       # no new target is tried after this long
//! sticky = true                                  # a conversation stays where it began
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use crate::ConfigError;

/// A named route: targets tried in order, each `provider/model` or a name that resolves.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RouteTargets {
    pub targets: Vec<String>,
}

/// The task rules of `[router]`: which target (a model, alias or route name) serves requests
/// of each shape. A rule left out does not fire.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaskRules {
    /// Claude Code's background calls: its small/fast model (a `haiku` model name).
    pub background: Option<String>,
    /// Requests that ask for thinking / reasoning.
    pub think: Option<String>,
    /// Requests whose estimated prompt is above `long_context_threshold` tokens.
    pub long_context: Option<String>,
    pub long_context_threshold: u64,
    /// Requests with an image in the conversation.
    pub image: Option<String>,
    /// Requests that offer a web search tool.
    pub web_search: Option<String>,
}

impl TaskRules {
    /// Whether any rule is set (the gateway reads a request's shape only then).
    pub fn any(&self) -> bool {
        self.background.is_some()
            || self.think.is_some()
            || self.long_context.is_some()
            || self.image.is_some()
            || self.web_search.is_some()
    }
}

/// `[routes.*]` and `[router]`, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutingConfig {
    pub routes: BTreeMap<String, RouteTargets>,
    pub rules: TaskRules,
    /// How long after a request arrived a new target may still be tried.
    pub failover_deadline: Duration,
    /// Whether a conversation stays on the target and key that began it.
    pub sticky: bool,
}

/// Claude Code's own threshold for a long context is about this many tokens.
pub const DEFAULT_LONG_CONTEXT_THRESHOLD: u64 = 60_000;

impl Default for RoutingConfig {
    fn default() -> Self {
        Self {
            routes: BTreeMap::new(),
            rules: TaskRules {
                long_context_threshold: DEFAULT_LONG_CONTEXT_THRESHOLD,
                ..TaskRules::default()
            },
            failover_deadline: Duration::from_secs(60),
            sticky: true,
        }
    }
}

/// Reads `[routes.*]` and `[router]`.
pub(crate) fn read_routing(
    routes: Option<&toml::Value>,
    router: Option<&toml::Value>,
    source: &str,
) -> Result<RoutingConfig, ConfigError> {
    let invalid = |key: String, message: &str| ConfigError::Invalid {
        key,
        source_name: source.to_owned(),
        message: message.to_owned(),
    };
    let mut config = RoutingConfig::default();
    if let Some(routes) = routes {
        let table = routes.as_table().ok_or_else(|| {
            invalid(
                "routes".to_owned(),
                "expected [routes.<name>] tables with targets = [...]",
            )
        })?;
        for (name, entry) in table {
            let key = format!("routes.{name}");
            let entry = entry
                .as_table()
                .ok_or_else(|| invalid(key.clone(), "expected a table with targets = [...]"))?;
            if let Some(field) = entry.keys().find(|field| *field != "targets") {
                return Err(invalid(
                    format!("{key}.{field}"),
                    "unknown field (accepted: targets)",
                ));
            }
            let targets = entry
                .get("targets")
                .and_then(toml::Value::as_array)
                .and_then(|items| {
                    items
                        .iter()
                        .map(|item| item.as_str().map(|text| text.trim().to_owned()))
                        .collect::<Option<Vec<_>>>()
                })
                .filter(|targets| !targets.is_empty() && targets.iter().all(|t| !t.is_empty()))
                .ok_or_else(|| {
                    invalid(
                        format!("{key}.targets"),
                        "expected a non-empty list of \"provider/model\" strings",
                    )
                })?;
            config.routes.insert(name.clone(), RouteTargets { targets });
        }
    }
    let Some(router) = router else {
        return Ok(config);
    };
    let table = router
        .as_table()
        .ok_or_else(|| invalid("router".to_owned(), "expected a [router] table"))?;
    for (field, value) in table {
        let key = format!("router.{field}");
        let target = || {
            value
                .as_str()
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| invalid(key.clone(), "expected a model, alias or route name"))
        };
        let rules = &mut config.rules;
        match field.as_str() {
            "background" => rules.background = Some(target()?),
            "think" => rules.think = Some(target()?),
            "long_context" => rules.long_context = Some(target()?),
            "image" => rules.image = Some(target()?),
            "web_search" => rules.web_search = Some(target()?),
            "long_context_threshold" => {
                rules.long_context_threshold = value
                    .as_integer()
                    .and_then(|n| u64::try_from(n).ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| invalid(key.clone(), "expected a positive number of tokens"))?;
            }
            "failover_deadline_s" => {
                let seconds = value
                    .as_integer()
                    .and_then(|n| u64::try_from(n).ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| invalid(key.clone(), "expected a positive number of seconds"))?;
                config.failover_deadline = Duration::from_secs(seconds);
            }
            "sticky" => {
                config.sticky = value
                    .as_bool()
                    .ok_or_else(|| invalid(key.clone(), "expected true or false"))?;
            }
            _ => {
                return Err(invalid(
                    key,
                    "unknown field (accepted: background, think, long_context, \
                     long_context_threshold, image, web_search, failover_deadline_s, sticky)",
                ));
            }
        }
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RoutingConfig, ConfigError> {
        let value: toml::Table = toml::from_str(text).unwrap();
        read_routing(value.get("routes"), value.get("router"), "config.toml")
    }

    #[test]
    fn routes_and_rules_are_read() {
        let config = parse(
            r#"
            [routes.sonnet]
            targets = ["anthropic/claude-sonnet-4-5", "zed/claude-sonnet-4-6"]
            [router]
            background = "xai/grok-4-fast-non-reasoning"
            long_context = "gemini/gemini-2.5-pro"
            long_context_threshold = 1000
            failover_deadline_s = 5
            sticky = false
            "#,
        )
        .unwrap();
        assert_eq!(
            config.routes["sonnet"].targets,
            ["anthropic/claude-sonnet-4-5", "zed/claude-sonnet-4-6"]
        );
        assert_eq!(
            config.rules.background.as_deref(),
            Some("xai/grok-4-fast-non-reasoning")
        );
        assert_eq!(config.rules.long_context_threshold, 1000);
        assert_eq!(config.failover_deadline, Duration::from_secs(5));
        assert!(!config.sticky);
        assert!(config.rules.any());
        assert!(config.rules.think.is_none());
    }

    #[test]
    fn mistakes_are_named() {
        for (text, key) in [
            ("[routes.a]\ntargets = []", "routes.a.targets"),
            ("[routes.a]\ntarget = [\"x\"]", "routes.a.target"),
            ("[router]\nthinking = \"x\"", "router.thinking"),
            (
                "[router]\nlong_context_threshold = -1",
                "router.long_context_threshold",
            ),
        ] {
            match parse(text) {
                Err(ConfigError::Invalid { key: found, .. }) => assert_eq!(found, key, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(!parse("").unwrap().rules.any());
    }
}
