//! Every provider quirk corvid works around, in one place and applied on every path: the
//! pass-through (top-level fields of the client's body), the gateway's translation and the
//! agent (the canonical request, then the encoded body). Which quirks apply is decided by the
//! provider's settings (`Capabilities`, `model_rules`), never by its name.
//!
//! Sources for xAI's table: `shared/reference/zed-and-xai.md` §4.2, §7.1 and §7.2.

use corvid_wire::Dialect;
use corvid_wire::encoded::EncodedBody;
use corvid_wire::model::{ChatRequest, Part};

use crate::provider::Provider;
use crate::registry::dialect_of;

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

/// The fields xAI refuses in a body for `model`, in the table's order. `value` reads a
/// top-level field: `None` when it is absent, `Some(None)` when it is not a string, so any
/// body representation (the pass-through's scanner, an encoded `Value`) gets the same answer.
pub fn xai_removals<S: AsRef<str>>(
    model: &str,
    value: impl Fn(&'static str) -> Option<Option<S>>,
) -> Vec<&'static str> {
    let mut removed = Vec::new();
    for &field in xai_fields() {
        let Some(found) = value(field) else {
            continue;
        };
        let Some(rule) = XAI_RULES
            .iter()
            .find(|rule| rule.field == field && rule.models.matches(model))
        else {
            continue;
        };
        let rejected = match rule.rejects {
            Rejects::Always => true,
            Rejects::ValuesOtherThan(accepted) => found
                .as_ref()
                .is_none_or(|value| !accepted.contains(&value.as_ref())),
        };
        if rejected {
            tracing::debug!(
                field = rule.field,
                model = ?model,
                why = rule.why,
                "dropping a field xAI rejects"
            );
            removed.push(rule.field);
        }
    }
    removed
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

/// The encoded body of a translated request, settled like a passed-through one: xAI's table
/// (for a provider with `xai_field_rules`) and the model rule's `drop` list; toward Anthropic,
/// the cache breakpoints a client of another dialect could not set.
pub fn settle_encoded(provider: &Provider, model: &str, body: &mut EncodedBody) {
    if provider.config().capabilities.xai_field_rules {
        let removed = xai_removals(model, |field| body.get(field).map(|_| body.get_str(field)));
        for field in removed {
            body.remove(field);
        }
    }
    if let Some(rule) = provider.config().rule(model) {
        for field in &rule.drop {
            body.remove(field);
        }
    }
    if provider.kind() == corvid_config::ProviderKind::Anthropic {
        // The breakpoints go deep into the messages: edited as a value (Anthropic only).
        let mut value = body.to_value();
        crate::caching::add_anthropic_breakpoints(&mut value);
        *body = EncodedBody::from_value(&value);
    }
}

/// Adjusts a canonical request for the provider it goes to: the provider's model name, no
/// foreign `extra` fields, no reasoning the provider's chat API would refuse, the output limit
/// of the model's rule.
pub fn prepare_request(provider: &Provider, model: &str, request: &mut ChatRequest) {
    request.model = model.to_owned();
    request.extra.clear();
    if dialect_of(provider.kind()) == Dialect::OpenAiChat
        && !provider.config().capabilities.accepts_reasoning
    {
        // Reasoning would ride as `reasoning_content`, which only DeepSeek-style servers read.
        for message in &mut request.messages {
            message
                .parts
                .retain(|part| !matches!(part, Part::Reasoning(_)));
        }
    }
    orphan_results_to_text(&mut request.messages);
    if let Some(limit) = provider
        .config()
        .rule(model)
        .and_then(|rule| rule.max_output_tokens)
    {
        let asked = request.params.max_output_tokens.unwrap_or(limit);
        request.params.max_output_tokens = Some(asked.min(limit));
    }
    if request.params.max_output_tokens.is_none() {
        request.params.max_output_tokens = default_output_limit(provider, model);
    }
}

/// The output limit sent to a keyless server on this machine (llama.cpp, Ollama, vLLM…) when
/// the client gave none: a quarter of the model's window where its list states one, between
/// 1,024 and 8,192 tokens, else 4,096 — a small local model left unbounded can ramble for
/// minutes. `None` for hosted providers, whose own defaults are sane.
pub fn default_output_limit(provider: &Provider, model: &str) -> Option<u32> {
    if !is_local_server(provider) {
        return None;
    }
    let limit = provider
        .listed_window(model)
        .map_or(4096, |window| (window / 4).clamp(1024, 8192));
    u32::try_from(limit).ok()
}

/// Whether the opaque reasoning `provider` hands out is bound to the account of the key that
/// got it, so another pool key cannot give it back: OpenAI-style `encrypted_content` is
/// sealed per organisation (xAI's per team), and a pool spreads rate limits and quotas only
/// when its keys are separate organisations. Anthropic's thinking signatures are valid
/// across accounts and platforms, Gemini's thought signatures are per model: not bound.
pub fn reasoning_bound_to_key(provider: &Provider) -> bool {
    matches!(
        provider.api_dialect(),
        Some(corvid_wire::Dialect::OpenAiChat | corvid_wire::Dialect::OpenAiResponses)
    ) && (provider.config().capabilities.serves_responses
        || provider.kind() == corvid_config::ProviderKind::OpenAiResponses)
}

/// The origin label of opaque values one pool key of `provider` handed out, for settling a
/// conversation that moved between keys (see [`reasoning_bound_to_key`]).
pub fn key_origin(provider: &str, key: usize) -> String {
    format!("{provider}key{key}")
}

/// Whether `provider` is a keyless server on this machine (llama.cpp, Ollama, vLLM…): its
/// window is what the server was started with, and a prompt above it is cut silently.
pub fn is_local_server(provider: &Provider) -> bool {
    provider.upstream().credential().is_none() && is_local(&provider.config().base_url)
}

/// Whether a base URL names this machine.
fn is_local(base_url: &str) -> bool {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host),
    };
    matches!(host, "localhost" | "::1") || host.starts_with("127.")
}

/// Tool results that answer no call of the assistant message before them (a client that
/// relied on server-side state, a trimmed history) become text: strict upstreams refuse them.
pub(crate) fn orphan_results_to_text(messages: &mut [corvid_wire::model::Message]) {
    use corvid_wire::model::Role;
    let mut previous_calls: Vec<String> = Vec::new();
    for message in messages.iter_mut() {
        match message.role {
            Role::Assistant => previous_calls = message.call_ids(),
            Role::User => {
                for part in &mut message.parts {
                    if let Part::ToolResult(result) = part
                        && !previous_calls.contains(&result.call_id)
                    {
                        *part = Part::Text {
                            text: format!(
                                "[Result of tool call {}]\n{}",
                                result.call_id,
                                result.text()
                            ),
                        };
                    }
                }
                previous_calls.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests;
