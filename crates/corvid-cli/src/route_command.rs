//! `corvid route explain`: which target a request would take, and why — the task rule that
//! fired (with the request's shape), the route's targets in the order they would be tried
//! (with their pool keys), and the targets left out.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context;
use corvid_config::Loaded;
use corvid_providers::{Registry, RequestShape};
use corvid_wire::Dialect;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum RouteCommand {
    /// Print the target a request would take and why (reads the request JSON from FILE, or
    /// from stdin when FILE is `-` or absent).
    Explain {
        /// The request body, as a client would POST it.
        file: Option<PathBuf>,
        /// The request's API: anthropic, openai-chat, openai-responses or gemini (guessed from
        /// the body when not given).
        #[arg(long, value_name = "API")]
        dialect: Option<String>,
        /// The model, when the body names none (Gemini's is in the URL).
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
    },
}

pub(crate) fn run(
    loaded: &Loaded,
    registry: &Registry,
    command: RouteCommand,
) -> anyhow::Result<String> {
    let RouteCommand::Explain {
        file,
        dialect,
        model,
    } = command;
    let body = match file.filter(|path| path.as_os_str() != "-") {
        Some(path) => {
            std::fs::read(&path).with_context(|| format!("could not read {}", path.display()))?
        }
        None => {
            let mut body = Vec::new();
            std::io::stdin()
                .read_to_end(&mut body)
                .context("could not read the request from stdin")?;
            body
        }
    };
    let value: serde_json::Value =
        serde_json::from_slice(&body).context("the request is not JSON")?;
    let dialect = match dialect.as_deref() {
        Some(name) => parse_dialect(name)?,
        None => guess_dialect(&value),
    };
    let requested = model
        .or_else(|| value["model"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let request =
        corvid_wire::codec::decode_request(dialect, &body, &requested).map_err(|error| {
            anyhow::anyhow!("the request could not be read as {dialect:?}: {error}")
        })?;
    let shape = RequestShape::of(&request);
    explain(loaded, registry, dialect, &requested, &shape)
}

fn explain(
    loaded: &Loaded,
    registry: &Registry,
    dialect: Dialect,
    requested: &str,
    shape: &RequestShape,
) -> anyhow::Result<String> {
    let rules = &loaded.config.routing.rules;
    let yes_no = |on: bool| if on { "yes" } else { "no" };
    let mut out = format!(
        "request: {} asking for {}\nshape: thinking {}, images {}, web search {}, about {} \
         tokens (long context above {})\n",
        dialect.as_str(),
        if requested.is_empty() {
            format!("no model (default {})", registry.default_model())
        } else {
            format!("\"{requested}\"")
        },
        yes_no(shape.thinking),
        yes_no(shape.images),
        yes_no(shape.web_search),
        shape.estimated_tokens,
        rules.long_context_threshold,
    );
    let plan = registry
        .plan(requested, Some(shape), None)
        .map_err(|error| anyhow::anyhow!("no target: {error}"))?;
    match plan.rule {
        Some(rule) => out.push_str(&format!("rule: {rule} fired\n")),
        None if rules.any() => out.push_str("rule: none fired\n"),
        None => out.push_str("rule: none configured ([router] in config.toml)\n"),
    }
    match &plan.route {
        Some(route) => out.push_str(&format!("route: {route}\n")),
        None => out.push_str("route: the model itself (no [routes] entry)\n"),
    }
    out.push_str("tried in order, each only if the one before failed before any output:\n");
    for (index, attempt) in plan.attempts.iter().enumerate() {
        let keys = attempt.provider.keys().len();
        let key = if keys > 1 {
            let resting = if attempt.provider.keys().is_resting(attempt.key) {
                ", resting"
            } else {
                ""
            };
            format!("  (key {} of {keys}{resting})", attempt.key)
        } else {
            String::new()
        };
        out.push_str(&format!("  {}. {}{key}\n", index + 1, attempt.target()));
    }
    for (target, reason) in &plan.skipped {
        out.push_str(&format!("left out: {target}: {reason}\n"));
    }
    Ok(out)
}

fn parse_dialect(name: &str) -> anyhow::Result<Dialect> {
    Ok(match name.trim() {
        "anthropic" | "messages" => Dialect::Anthropic,
        "openai-chat" | "chat" | "openai" => Dialect::OpenAiChat,
        "openai-responses" | "responses" => Dialect::OpenAiResponses,
        "gemini" | "google" => Dialect::Gemini,
        other => anyhow::bail!(
            "unknown API {other:?}: expected anthropic, openai-chat, openai-responses or gemini"
        ),
    })
}

/// Gemini has `contents`, Responses `input`; a chat body has `messages` with system or tool
/// turns, or none of Anthropic's marks (`system`, `max_tokens`, typed content blocks).
fn guess_dialect(value: &serde_json::Value) -> Dialect {
    if value.get("contents").is_some() {
        return Dialect::Gemini;
    }
    if value.get("input").is_some() {
        return Dialect::OpenAiResponses;
    }
    let messages = value["messages"].as_array();
    let chat_roles = messages.is_some_and(|messages| {
        messages.iter().any(|message| {
            matches!(
                message["role"].as_str(),
                Some("system" | "tool" | "developer")
            )
        })
    });
    if chat_roles {
        return Dialect::OpenAiChat;
    }
    let anthropic = value.get("system").is_some()
        || value.get("thinking").is_some()
        || value.get("max_tokens").is_some();
    if anthropic {
        Dialect::Anthropic
    } else {
        Dialect::OpenAiChat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_api_is_guessed_from_the_body() {
        assert_eq!(guess_dialect(&json!({"contents": []})), Dialect::Gemini);
        assert_eq!(
            guess_dialect(&json!({"input": "hi"})),
            Dialect::OpenAiResponses
        );
        assert_eq!(
            guess_dialect(&json!({"max_tokens": 5, "messages": []})),
            Dialect::Anthropic
        );
        assert_eq!(
            guess_dialect(&json!({"messages": [{"role": "system", "content": "x"}]})),
            Dialect::OpenAiChat
        );
        assert_eq!(guess_dialect(&json!({"messages": []})), Dialect::OpenAiChat);
        assert!(parse_dialect("nope").is_err());
    }
}
