//! A first run: no provider can answer yet. Every face says how to connect one, with the same
//! three choices (a key, a sign-in, a local server); `serve` prints them at start (instead of a
//! warning about xAI's key, which a user of another provider does not need), `status` under its
//! lines.

use corvid_config::Loaded;
use corvid_providers::{Provider, Registry};

/// A provider requests can be answered by now: routable, with its credential (or none needed,
/// as a local server), or a signed-in Zed account.
pub(crate) fn is_ready(provider: &Provider) -> bool {
    provider.is_available()
        && (provider.zed_service().is_some() || provider.upstream().credential().is_available())
}

/// The providers ready now, by name.
pub(crate) fn ready(registry: &Registry) -> Vec<String> {
    registry
        .providers()
        .iter()
        .filter(|provider| is_ready(provider))
        .map(|provider| provider.name().to_owned())
        .collect()
}

/// The three ways to connect a provider, for a terminal.
pub(crate) fn connect_choices(loaded: &Loaded) -> String {
    let env_file = loaded.paths.env_file.display();
    let config_file = loaded.paths.config_file.display();
    format!(
        "corvid has no provider to answer with yet. Connect one:\n\
         \x20 1. Paste an API key into {env_file}: XAI_API_KEY=… (or OPENAI_API_KEY, \
         ANTHROPIC_API_KEY, GEMINI_API_KEY), or on the page's Settings tab.\n\
         \x20 2. Sign in: `corvid login xai` (a SuperGrok subscription; then auth_mode = \"oauth\") \
         or `corvid login zed` (a Zed account).\n\
         \x20 3. Point at a local OpenAI-compatible server (Ollama, llama.cpp, vLLM): in \
         {config_file} add\n\
         \x20      default_provider = \"ollama\"\n\
         \x20      [providers.ollama]\n\
         \x20      base_url = \"http://127.0.0.1:11434/v1\"\n\
         Then `corvid doctor` checks it."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded() -> Loaded {
        let env: std::collections::HashMap<String, String> = [(
            "CORVID_HOME".to_owned(),
            "/nonexistent/corvid-home".to_owned(),
        )]
        .into();
        corvid_config::load(&corvid_config::Flags::default(), &env).unwrap()
    }

    #[test]
    fn the_choices_name_the_files_and_the_commands() {
        let text = connect_choices(&loaded());
        assert!(
            text.contains("1. Paste an API key into /nonexistent/corvid-home/env: XAI_API_KEY=")
        );
        assert!(text.contains("`corvid login xai`"));
        assert!(text.contains("`corvid login zed`"));
        assert!(text.contains("3. Point at a local OpenAI-compatible server"));
        assert!(text.contains("in /nonexistent/corvid-home/config.toml add"));
    }
}
