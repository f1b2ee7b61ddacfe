//! The pass-through's view of the provider quirks: the edits `corvid_providers::quirks` (and
//! the provider's `model_rules`) ask for, spliced at the top level of the client's body.

use corvid_config::ProviderConfig;

use crate::top_level::{Edit, TopLevel};
use corvid_wire::Dialect;

/// The edits a provider needs before a same-dialect body is forwarded: xAI's rule table (for
/// a provider with `xai_field_rules`), the provider's configured `model_rules` (fields to drop, an output
/// limit to clamp to).
pub(crate) fn provider_removals(
    provider: &ProviderConfig,
    model: &str,
    body: &TopLevel<'_>,
    dialect: Dialect,
    default_output_limit: Option<u32>,
) -> Vec<Edit> {
    let mut edits: Vec<Edit> = if provider.capabilities.xai_field_rules {
        corvid_providers::quirks::xai_removals(model, |field| {
            body.has(field).then(|| body.str(field))
        })
        .into_iter()
        .map(Edit::Remove)
        .collect()
    } else {
        Vec::new()
    };
    // A local server gets an output limit when the client gave none (see
    // `corvid_providers::quirks::default_output_limit`).
    if let Some(limit) = default_output_limit
        && dialect == Dialect::OpenAiChat
        && body.has("messages")
        && !body.has("max_tokens")
        && !body.has("max_completion_tokens")
    {
        edits.push(Edit::Set("max_tokens", limit.to_string()));
    }
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
