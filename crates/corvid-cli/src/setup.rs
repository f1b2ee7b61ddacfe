//! `corvid models` and `corvid setup <client>`: what a user needs to point a client at corvid.

use corvid_config::Config;
use corvid_providers::Registry;

/// The catalog as a table: id, provider, context window where known, whether the provider is
/// set up.
pub(crate) async fn models(config: &Config, registry: &Registry) -> String {
    let mut lines = vec![format!(
        "{:<48} {:<12} {:<10} {:<8} {:<14} {:<5} {}",
        "MODEL", "PROVIDER", "WINDOW", "OUTPUT", "$/M IN/OUT", "CAN", "STATUS"
    )];
    // What corvid knows of a model: window, output limit, price, capabilities (t, i, r).
    let facts = |model: &str| {
        let info = registry.model_info(model);
        let window = info
            .window
            .map_or_else(|| "-".to_owned(), |window| window.tokens.to_string());
        let output = info
            .max_output
            .map_or_else(|| "-".to_owned(), |tokens| tokens.to_string());
        let price = corvid_store::price_of(&config.prices, &info.upstream).map_or_else(
            || "-".to_owned(),
            |price| format!("{}/{}", price.input, price.output),
        );
        let can = info.capabilities.map_or_else(
            || "-".to_owned(),
            |can| {
                [(can.tools, 't'), (can.images, 'i'), (can.reasoning, 'r')]
                    .iter()
                    .map(|(yes, letter)| if *yes { *letter } else { '.' })
                    .collect()
            },
        );
        format!("{window:<10} {output:<8} {price:<14} {can:<5}")
    };
    for (alias, target) in registry.aliases() {
        lines.push(format!(
            "{:<48} {:<12} {} alias for {target}",
            alias,
            "-",
            facts(alias)
        ));
    }
    for provider in registry.providers() {
        // What to do, in the routing's own words (`corvid login zed`, the key to set, …).
        let status = if !provider.config().enabled {
            "switched off".to_owned()
        } else if let Some(reason) = registry.unavailable_reason(provider) {
            reason
        } else if !provider.upstream().credential().is_available() {
            "no credential".to_owned()
        } else {
            "ready".to_owned()
        };
        let models = if provider.is_available() {
            provider.models().await
        } else {
            provider.config().models.clone()
        };
        if models.is_empty() {
            lines.push(format!(
                "{:<48} {:<12} {:<10} {:<8} {:<14} {:<5} {status} (lists no models; use {}/<model>)",
                format!("{}/*", provider.name()),
                provider.name(),
                "-",
                "-",
                "-",
                "-",
                provider.name()
            ));
        }
        for model in models {
            let name = format!("{}/{model}", provider.name());
            lines.push(format!(
                "{:<48} {:<12} {} {status}",
                name,
                provider.name(),
                facts(&name)
            ));
        }
    }
    lines.push(String::new());
    lines.push(
        "WINDOW: the context window in tokens the agent compacts against (config.toml's \
         [context_windows] or context_window, else the provider's list, else corvid's catalog). \
         OUTPUT: the longest answer. $/M IN/OUT: US dollars per million tokens ([prices], else \
         the catalog). CAN: t tools, i images, r reasoning."
            .to_owned(),
    );
    lines.push(format!(
        "A bare model name goes to the provider that lists it, else to its family's provider (claude-… → anthropic), else to `{}`.",
        config.default_provider
    ));
    lines.join("\n")
}

/// The client a `setup` snippet is for.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Client {
    ClaudeCode,
    Codex,
    Zed,
}

pub(crate) fn setup(
    config: &Config,
    client: Client,
    model: Option<&str>,
) -> anyhow::Result<String> {
    let base = config.local_base_url();
    Ok(match client {
        Client::ClaudeCode => {
            let model = model.unwrap_or("grok");
            format!(
                "# Claude Code → corvid. Put these in your shell (or in ~/.claude/settings.json under \"env\").\n\
                 # Claude Code appends /v1/messages itself, so the base URL has no /v1. Any token works:\n\
                 # corvid never forwards it and answers with the provider's own credential.\n\
                 export ANTHROPIC_BASE_URL={base}\n\
                 export ANTHROPIC_AUTH_TOKEN=corvid\n\
                 # The model Claude Code asks for; any corvid model name works (alias, provider/model, bare).\n\
                 export ANTHROPIC_MODEL={model}\n\
                 export ANTHROPIC_DEFAULT_OPUS_MODEL={model}\n\
                 export ANTHROPIC_DEFAULT_SONNET_MODEL={model}\n\
                 export ANTHROPIC_DEFAULT_HAIKU_MODEL={model}\n\
                 # Optional: stop the client sending experimental betas a non-Anthropic model would ignore.\n\
                 export CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=1\n"
            )
        }
        Client::Codex => {
            let model = model.unwrap_or("grok");
            format!(
                "# Codex → corvid: add to ~/.codex/config.toml. Codex speaks the Responses API; corvid\n\
                 # answers it from any provider. The key variable just has to be set (any value).\n\
                 # The first two keys are top-level: put them above any [table] already in the file\n\
                 # (below one, TOML reads them as part of that table).\n\
                 model = \"{model}\"\n\
                 model_provider = \"corvid\"\n\
                 \n\
                 [model_providers.corvid]\n\
                 name = \"corvid\"\n\
                 base_url = \"{base}/v1\"\n\
                 env_key = \"CORVID_API_KEY\"\n\
                 wire_api = \"responses\"\n\
                 \n\
                 # then: export CORVID_API_KEY=corvid\n"
            )
        }
        Client::Zed => format!(
            "{}\n{}",
            crate::zed_config::render(config, model.unwrap_or("supergrok"), "qwen")?,
            zed_agent_server()?
        ),
    })
}

/// Zed's `agent_servers` entry that runs corvid's agent in the agent panel (`corvid acp`).
/// The command is this binary's own path, because Zed may not start with the shell's PATH.
fn zed_agent_server() -> anyhow::Result<String> {
    let command = std::env::current_exe()
        .ok()
        .and_then(|path| path.to_str().map(str::to_owned))
        .unwrap_or_else(|| "corvid".to_owned());
    let settings = serde_json::json!({
        "agent_servers": {
            "corvid": {
                "type": "custom",
                "command": command,
                "args": ["acp"],
                "env": {}
            }
        }
    });
    Ok(format!(
        "// corvid's coding agent in Zed's agent panel (the Agent Client Protocol): merge this key\n\
         // into the same root object too, then pick \"corvid\" from the agent panel's + menu.\n\
         // Logs: Zed's `dev: open acp logs`; corvid's own go to stderr (RUST_LOG=corvid=debug).\n{}\n",
        serde_json::to_string_pretty(&settings)?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_point_at_the_configured_address() {
        let config = Config {
            port: 9911,
            ..Config::default()
        };
        let claude = setup(&config, Client::ClaudeCode, Some("sonnet")).unwrap();
        assert!(
            claude.contains("ANTHROPIC_BASE_URL=http://127.0.0.1:9911\n"),
            "{claude}"
        );
        assert!(claude.contains("ANTHROPIC_MODEL=sonnet"));
        let codex = setup(&config, Client::Codex, None).unwrap();
        assert!(
            codex.contains("base_url = \"http://127.0.0.1:9911/v1\""),
            "{codex}"
        );
        assert!(codex.contains("wire_api = \"responses\""));
        // The snippet is valid TOML as printed (the Codex test suite writes it as config.toml).
        let parsed: toml::Table = codex.parse().unwrap();
        assert_eq!(parsed["model_provider"].as_str(), Some("corvid"));
        assert_eq!(
            parsed["model_providers"]["corvid"]["base_url"].as_str(),
            Some("http://127.0.0.1:9911/v1")
        );
        let zed = setup(&config, Client::Zed, None).unwrap();
        assert!(zed.contains("http://127.0.0.1:9911/v1/completions"));
        // The agent panel's entry: a JSON object of its own after the model-provider keys.
        let start = zed.find("{\n  \"agent_servers\"").unwrap();
        let agent: serde_json::Value = serde_json::from_str(zed[start..].trim()).unwrap();
        let corvid = &agent["agent_servers"]["corvid"];
        assert_eq!(corvid["type"], "custom");
        assert_eq!(corvid["args"], serde_json::json!(["acp"]));
        assert!(corvid["command"].as_str().unwrap().contains("corvid"));
    }
}
