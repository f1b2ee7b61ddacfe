//! Fields xAI rejects, per model, as one table. A request's top-level fields are checked
//! against it after the alias rewrite; a matching rule removes the field before forwarding.
//!
//! Sources: `shared/reference/zed-and-xai.md` §4.2, §7.1 and §7.2.

use corvid_config::ProviderConfig;

use crate::top_level::{Edit, TopLevel};
use corvid_wire::Dialect;

/// Which upstream models a rule covers.
#[derive(Debug, Clone, Copy)]
enum Models {
    Any,
    /// Exactly these names.
    Named(&'static [&'static str]),
    /// Names starting with any of these.
    Prefixed(&'static [&'static str]),
}

impl Models {
    fn matches(self, model: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Named(names) => names.contains(&model),
            Self::Prefixed(prefixes) => prefixes.iter().any(|prefix| model.starts_with(prefix)),
        }
    }
}

/// What is wrong with the field for those models.
#[derive(Debug, Clone, Copy)]
enum Rejects {
    /// The field in any form.
    Always,
    /// Any value except these strings.
    ValuesOtherThan(&'static [&'static str]),
}

#[derive(Debug, Clone, Copy)]
struct Rule {
    field: &'static str,
    models: Models,
    rejects: Rejects,
    why: &'static str,
}

const GROK_4_NO_EFFORT: &[&str] = &["grok-4-", "grok-4.1-", "grok-4.20"];

/// The first matching rule for a (field, model) pair decides; order from specific to general.
const XAI_RULES: &[Rule] = &[
    Rule {
        field: "prompt_cache_key",
        models: Models::Any,
        rejects: Rejects::Always,
        why: "Zed's OpenAI provider sends it; xAI's own clients never do",
    },
    Rule {
        field: "search_parameters",
        models: Models::Any,
        rejects: Rejects::Always,
        why: "Live Search is gone: xAI answers 410",
    },
    Rule {
        field: "reasoning_effort",
        models: Models::Named(&["grok-4.6"]),
        rejects: Rejects::ValuesOtherThan(&["low", "medium", "high", "xhigh"]),
        why: "grok-4.6 refuses `none`: omit the field when thinking is off",
    },
    Rule {
        field: "reasoning_effort",
        models: Models::Named(&["grok-4.5"]),
        rejects: Rejects::ValuesOtherThan(&["low", "medium", "high"]),
        why: "grok-4.5 has no `xhigh` and refuses `none`",
    },
    Rule {
        field: "reasoning_effort",
        models: Models::Named(&["grok-4.3", "grok-latest"]),
        rejects: Rejects::ValuesOtherThan(&["none", "low", "medium", "high"]),
        why: "grok-4.3 accepts none/low/medium/high",
    },
    Rule {
        field: "reasoning_effort",
        models: Models::Prefixed(&["grok-3-mini"]),
        rejects: Rejects::ValuesOtherThan(&["low", "high"]),
        why: "grok-3-mini accepts low/high",
    },
    Rule {
        field: "reasoning_effort",
        models: Models::Prefixed(&["grok-build"]),
        rejects: Rejects::Always,
        why: "grok-build takes no reasoning effort",
    },
    Rule {
        field: "reasoning_effort",
        models: Models::Named(&["grok-4"]),
        rejects: Rejects::Always,
        why: "\"Model does not support parameter reasoningEffort\"",
    },
    Rule {
        field: "reasoning_effort",
        models: Models::Prefixed(GROK_4_NO_EFFORT),
        rejects: Rejects::Always,
        why: "\"Model does not support parameter reasoningEffort\"",
    },
    Rule {
        field: "presence_penalty",
        models: Models::Prefixed(&["grok-4", "grok-3-mini"]),
        rejects: Rejects::Always,
        why: "reasoning models reject presence_penalty",
    },
    Rule {
        field: "frequency_penalty",
        models: Models::Prefixed(&["grok-4", "grok-3-mini"]),
        rejects: Rejects::Always,
        why: "reasoning models reject frequency_penalty",
    },
];

/// The edits a provider needs before a same-dialect body is forwarded: xAI's rule table (for
/// the xai provider), the provider's configured `model_rules` (fields to drop, an output
/// limit to clamp to).
pub(crate) fn provider_removals(
    provider: &ProviderConfig,
    model: &str,
    body: &TopLevel<'_>,
    dialect: Dialect,
) -> Vec<Edit> {
    let mut edits = if provider.name == "xai" {
        xai_removals(model, body)
    } else {
        Vec::new()
    };
    let Some(rule) = provider.rule(model) else {
        return edits;
    };
    for field in &rule.drop {
        if body.has(field)
            && !edits
                .iter()
                .any(|edit| matches!(edit, Edit::Remove(name) if name == field))
        {
            edits.push(Edit::RemoveOwned(field.clone()));
        }
    }
    if let Some(limit) = rule.max_output_tokens {
        let fields: &[&'static str] = match dialect {
            Dialect::OpenAiChat => &["max_completion_tokens", "max_tokens"],
            Dialect::OpenAiResponses => &["max_output_tokens"],
            Dialect::Anthropic => &["max_tokens"],
            Dialect::Gemini => &[],
        };
        for field in fields {
            let asked = body
                .raw(field)
                .and_then(|raw| std::str::from_utf8(raw).ok()?.parse::<u64>().ok());
            if asked.is_some_and(|asked| asked > u64::from(limit)) {
                edits.push(Edit::Set(field, limit.to_string()));
            }
        }
    }
    edits
}

/// The fields `XAI_RULES` covers, each once, in the table's order: a body is checked for
/// these few names only (most bodies have none of them). Derived from the table once.
fn xai_fields() -> &'static [&'static str] {
    static FIELDS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    FIELDS.get_or_init(|| {
        let mut fields = Vec::new();
        for rule in XAI_RULES {
            if !fields.contains(&rule.field) {
                fields.push(rule.field);
            }
        }
        fields
    })
}

/// The fields to remove from `body` before sending it to xAI for `model`.
pub(crate) fn xai_removals(model: &str, body: &TopLevel<'_>) -> Vec<Edit> {
    let mut edits = Vec::new();
    for &field in xai_fields() {
        if !body.has(field) {
            continue;
        }
        let Some(rule) = XAI_RULES
            .iter()
            .find(|rule| rule.field == field && rule.models.matches(model))
        else {
            continue;
        };
        let rejected = match rule.rejects {
            Rejects::Always => true,
            Rejects::ValuesOtherThan(accepted) => body
                .str(rule.field)
                .is_none_or(|value| !accepted.contains(&value.as_ref())),
        };
        if rejected {
            tracing::debug!(
                field = rule.field,
                model = %crate::log_text::Clean(model),
                why = rule.why,
                "dropping a field xAI rejects"
            );
            edits.push(Edit::Remove(rule.field));
        }
    }
    edits
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn removed(model: &str, body: &str) -> Vec<&'static str> {
        let top = TopLevel::parse(body.as_bytes()).unwrap();
        xai_removals(model, &top)
            .into_iter()
            .map(|edit| match edit {
                Edit::Remove(field) => field,
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    #[test]
    fn table() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "grok-4.6",
                r#"{"prompt_cache_key":"t"}"#,
                &["prompt_cache_key"],
            ),
            (
                "grok-4.6",
                r#"{"search_parameters":{}}"#,
                &["search_parameters"],
            ),
            ("grok-4.6", r#"{"reasoning_effort":"high"}"#, &[]),
            ("grok-4.6", r#"{"reasoning_effort":"xhigh"}"#, &[]),
            (
                "grok-4.6",
                r#"{"reasoning_effort":"none"}"#,
                &["reasoning_effort"],
            ),
            (
                "grok-4.6",
                r#"{"reasoning_effort":null}"#,
                &["reasoning_effort"],
            ),
            (
                "grok-4.5",
                r#"{"reasoning_effort":"xhigh"}"#,
                &["reasoning_effort"],
            ),
            ("grok-4.5", r#"{"reasoning_effort":"low"}"#, &[]),
            ("grok-4.3", r#"{"reasoning_effort":"none"}"#, &[]),
            (
                "grok-3-mini",
                r#"{"reasoning_effort":"medium"}"#,
                &["reasoning_effort"],
            ),
            ("grok-3-mini", r#"{"reasoning_effort":"high"}"#, &[]),
            (
                "grok-build-0.1",
                r#"{"reasoning_effort":"high"}"#,
                &["reasoning_effort"],
            ),
            (
                "grok-4",
                r#"{"reasoning_effort":"high"}"#,
                &["reasoning_effort"],
            ),
            (
                "grok-4-fast-reasoning",
                r#"{"reasoning_effort":"low"}"#,
                &["reasoning_effort"],
            ),
            (
                "grok-4.1-fast",
                r#"{"reasoning_effort":"low"}"#,
                &["reasoning_effort"],
            ),
            (
                "grok-4.20-beta",
                r#"{"reasoning_effort":"low"}"#,
                &["reasoning_effort"],
            ),
            ("some-other-model", r#"{"reasoning_effort":"low"}"#, &[]),
            (
                "grok-4.6",
                r#"{"presence_penalty":0.5,"frequency_penalty":0.1}"#,
                &["presence_penalty", "frequency_penalty"],
            ),
            ("grok-2", r#"{"presence_penalty":0.5}"#, &[]),
            ("grok-4.6", r#"{"temperature":1.0,"messages":[]}"#, &[]),
        ];
        for (model, body, expected) in cases {
            assert_eq!(removed(model, body), *expected, "{model} {body}");
        }
    }
}
