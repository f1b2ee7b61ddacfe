//! The model catalog shipped with corvid (`catalog.toml`, compiled in): each known model's
//! context window, output limit, prices and capabilities. It is the fallback behind what the
//! user configured (`[prices]`, `[context_windows]`) and what a provider says of its own models;
//! `/v1/models`, `corvid models` and every cost (`Config::price`, `corvid_store::priced`) read it.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::Price;

/// The catalog's text, as shipped.
const CATALOG: &str = include_str!("../catalog.toml");

/// What corvid knows of one model without asking anyone.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFacts {
    /// The preset provider that serves it under this name (`xai`, `anthropic`, `openai`,
    /// `gemini`).
    pub provider: String,
    /// The name the provider takes.
    pub id: String,
    /// The whole window in tokens (input and output together), as the vendor states it.
    pub context_window: Option<u64>,
    /// The input limit, where the vendor states one below `context_window`.
    pub max_input: Option<u64>,
    /// The longest answer in tokens, where stated apart from the window.
    pub max_output: Option<u64>,
    /// List prices, base tier; `None` where no source states them.
    pub price: Option<Price>,
    /// Function calling.
    pub tools: bool,
    /// Image input.
    pub images: bool,
    /// Thinks before answering.
    pub reasoning: bool,
}

impl ModelFacts {
    /// The most a request may carry: the stated input limit, else the window.
    pub fn input_limit(&self) -> Option<u64> {
        self.max_input.or(self.context_window)
    }
}

/// Every model of `catalog.toml`, with lookups by name.
#[derive(Debug, Default)]
pub struct Catalog {
    models: Vec<ModelFacts>,
}

/// One line of `catalog.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    context: Option<u64>,
    max_input: Option<u64>,
    max_output: Option<u64>,
    input: Option<f64>,
    output: Option<f64>,
    cached_input: Option<f64>,
    cache_write: Option<f64>,
    #[serde(default)]
    can: Vec<Capability>,
}

#[derive(Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Capability {
    Tools,
    Images,
    Reasoning,
}

impl Catalog {
    /// Reads a catalog in `catalog.toml`'s format (a table per provider, a line per model).
    pub fn parse(text: &str) -> Result<Self, toml::de::Error> {
        let tables: BTreeMap<String, BTreeMap<String, Entry>> = toml::from_str(text)?;
        let models = tables
            .into_iter()
            .flat_map(|(provider, models)| {
                models.into_iter().map(move |(id, entry)| {
                    let price = match (entry.input, entry.output) {
                        (Some(input), Some(output)) => Some(Price {
                            input,
                            output,
                            cached_input: entry.cached_input.unwrap_or(input),
                            cache_write: entry.cache_write.unwrap_or(input),
                        }),
                        _ => None,
                    };
                    ModelFacts {
                        provider: provider.clone(),
                        id,
                        context_window: entry.context,
                        max_input: entry.max_input,
                        max_output: entry.max_output,
                        price,
                        tools: entry.can.contains(&Capability::Tools),
                        images: entry.can.contains(&Capability::Images),
                        reasoning: entry.can.contains(&Capability::Reasoning),
                    }
                })
            })
            .collect();
        Ok(Self { models })
    }

    /// Every model, by provider then name.
    pub fn models(&self) -> &[ModelFacts] {
        &self.models
    }

    /// The model a provider calls `name`: the name itself, or with what only tells a
    /// snapshot or a variant taken off (a `models/` or `provider/` prefix, a date or `-latest`
    /// suffix, xAI's `-reasoning`/`-non-reasoning`). `None` for a model the catalog lacks.
    pub fn model(&self, name: &str) -> Option<&ModelFacts> {
        let name = name.trim().to_ascii_lowercase();
        let name = name.strip_prefix("models/").unwrap_or(&name);
        let bare = name.rsplit_once('/').map_or(name, |(_, model)| model);
        let mut candidate = bare;
        loop {
            // Anthropic names a first release both `claude-opus-4-0` and `claude-opus-4-2025…`.
            let first_release = format!("{candidate}-0");
            if let Some(found) = self
                .models
                .iter()
                .find(|model| model.id == candidate || model.id == first_release)
            {
                return Some(found);
            }
            candidate = shorter(candidate)?;
        }
    }

    /// The list price of `model`, where the catalog has one.
    pub fn price(&self, model: &str) -> Option<Price> {
        self.model(model).and_then(|facts| facts.price)
    }
}

/// `name` without its last snapshot or variant suffix, or `None` when it has none.
fn shorter(name: &str) -> Option<&str> {
    for suffix in ["-latest", "-non-reasoning", "-reasoning"] {
        if let Some(stripped) = name.strip_suffix(suffix) {
            return Some(stripped);
        }
    }
    // A date: -20250929 (Anthropic), -2024-08-06 (OpenAI), -0709 (xAI).
    let digits =
        |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_digit());
    let (head, last) = name.rsplit_once('-')?;
    if digits(last, 8) || digits(last, 4) {
        return Some(head);
    }
    if digits(last, 2) {
        let (head, month) = head.rsplit_once('-')?;
        let (head, year) = head.rsplit_once('-')?;
        if digits(month, 2) && digits(year, 4) {
            return Some(head);
        }
    }
    None
}

/// The catalog shipped with corvid.
pub fn catalog() -> &'static Catalog {
    static SHIPPED: OnceLock<Catalog> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        // The shipped text is checked by this module's tests; an empty catalog (no prices, no
        // windows) is the safe reading should it ever fail.
        Catalog::parse(CATALOG).unwrap_or_default()
    })
}

#[cfg(test)]
mod tests;
