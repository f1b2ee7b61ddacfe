//! Whether reloaded settings change anything that serves requests. corvid writes the env file
//! itself when it refreshes a SuperGrok sign-in (the new tokens are stored for the next start):
//! the watcher sees a change, but the running sign-in session already holds those tokens. Such
//! a reload must not rebuild the app and reconnect every tab. It has no effect when the
//! configuration is the same, the env file is the same apart from the sign-in's own token
//! variables, and every provider built from it was kept from the running registry (see
//! `Registry::keeping_unchanged`: a token that differs from what the running session holds —
//! a sign-in from another terminal — makes its provider new, and the reload happen).

use std::collections::BTreeSet;
use std::sync::Arc;

use corvid_config::Loaded;
use corvid_providers::Registry;

/// The env-file variables a sign-in session rewrites by itself when it refreshes.
const REFRESHED_BY_CORVID: [&str; 3] = [
    corvid_auth::ACCESS_TOKEN_VAR,
    corvid_auth::REFRESH_TOKEN_VAR,
    corvid_auth::EXPIRES_AT_VAR,
];

/// Whether `next` (with `next_registry`, built from it keeping unchanged providers) serves
/// exactly as `running` (with `running_registry`) does.
pub(crate) fn same_effect(
    running: &Loaded,
    running_registry: &Registry,
    next: &Loaded,
    next_registry: &Registry,
) -> bool {
    running.config == next.config
        && same_env_file_apart_from_tokens(running, next)
        && same_providers(running_registry, next_registry)
}

fn same_env_file_apart_from_tokens(running: &Loaded, next: &Loaded) -> bool {
    let names: BTreeSet<&str> = running
        .env_file
        .keys()
        .chain(next.env_file.keys())
        .filter(|name| !REFRESHED_BY_CORVID.contains(name))
        .collect();
    names
        .into_iter()
        .all(|name| running.env_file.get(name) == next.env_file.get(name))
}

fn same_providers(running: &Registry, next: &Registry) -> bool {
    running.providers().len() == next.providers().len()
        && running
            .providers()
            .iter()
            .zip(next.providers())
            .all(|(kept, new)| Arc::ptr_eq(kept, new))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(home: &std::path::Path) -> Loaded {
        let env: std::collections::HashMap<String, String> =
            [("CORVID_HOME".to_owned(), home.display().to_string())].into();
        corvid_config::load(&corvid_config::Flags::default(), &env).unwrap()
    }

    fn registry(loaded: &Loaded) -> Registry {
        Registry::from_config(loaded, reqwest::Client::new()).unwrap()
    }

    #[test]
    fn only_a_change_that_serves_differently_counts() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("env"), "XAI_API_KEY=k1\nOTHER=a\n").unwrap();
        let running = load(home.path());
        let running_registry = registry(&running);
        let again = |env: &str, config: &str| {
            std::fs::write(home.path().join("env"), env).unwrap();
            std::fs::write(home.path().join("config.toml"), config).unwrap();
            let next = load(home.path());
            let next_registry = registry(&next).keeping_unchanged(&running_registry);
            same_effect(&running, &running_registry, &next, &next_registry)
        };
        assert!(
            again("XAI_API_KEY=k1\nOTHER=a\n", ""),
            "written again as it was"
        );
        assert!(
            again(
                "XAI_API_KEY=k1\nOTHER=a\nXAI_TOKEN_EXPIRES_AT=1900000000\n",
                ""
            ),
            "a token variable the sign-in session rewrites"
        );
        assert!(!again("XAI_API_KEY=k2\nOTHER=a\n", ""), "a new key");
        assert!(!again("XAI_API_KEY=k1\nOTHER=b\n", ""), "another variable");
        assert!(
            !again("XAI_API_KEY=k1\nOTHER=a\n", "max_retries = 5\n"),
            "the configuration"
        );
    }
}
