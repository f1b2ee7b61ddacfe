use std::collections::HashMap;
use std::fs;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;

fn env(home: &Path, pairs: &[(&str, &str)]) -> HashMap<String, String> {
    let mut env: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    env.entry("CORVID_HOME".to_owned())
        .or_insert_with(|| home.display().to_string());
    env
}

#[test]
fn defaults_match_the_seed() {
    let home = tempfile::tempdir().unwrap();
    let loaded = load(&Flags::default(), &env(home.path(), &[])).unwrap();
    let config = loaded.config;
    assert_eq!(config.host, "127.0.0.1");
    assert_eq!(config.port, 8787);
    assert_eq!(config.default_model, "grok-4.6");
    assert_eq!(config.upstream, "https://api.x.ai/v1");
    assert_eq!(config.request_timeout, Duration::from_secs(600));
    assert_eq!(config.connect_timeout, Duration::from_secs(10));
    assert_eq!(config.max_retries, 2);
    assert_eq!(config.log_level, LogLevel::Info);
    assert!(!config.log_prompts);
    assert_eq!(config.auth_mode, AuthMode::ApiKey);
    assert_eq!(config.completions_backend, CompletionsBackend::Responses);
    assert!(config.completions_enabled);
    assert!(!config.allow_remote);
    assert_eq!(config.resolve_model("supergrok"), "grok-4.6");
    assert_eq!(config.resolve_model("grok"), "grok-4.6");
    assert_eq!(config.resolve_model("grok-3-mini"), "grok-3-mini");
    assert_eq!(config.resolve_model(""), "grok-4.6");
    assert!(loaded.warnings.is_empty());
}

#[test]
fn precedence_flag_over_env_over_env_file_over_toml() {
    let home = tempfile::tempdir().unwrap();
    fs::write(
        home.path().join("config.toml"),
        "port = 1001\nhost = \"127.0.0.2\"\ndefault_model = \"from-toml\"\nupstream = \"http://toml.invalid/v1\"\nlog_level = \"debug\"\n",
    )
    .unwrap();
    fs::write(
        home.path().join("env"),
        "CORVID_PORT=1002\nSUPERGROK_ZED_DEFAULT_MODEL=from-env-file\nCORVID_UPSTREAM=http://envfile.invalid/v1\n",
    )
    .unwrap();
    let process = env(
        home.path(),
        &[
            ("CORVID_PORT", "1003"),
            ("SUPERGROK_ZED_UPSTREAM", "http://process.invalid/v1/"),
        ],
    );

    let loaded = load(&Flags::default(), &process).unwrap();
    assert_eq!(
        loaded.config.port, 1003,
        "process env beats env file and toml"
    );
    assert_eq!(
        loaded.config.default_model, "from-env-file",
        "env file beats toml"
    );
    assert_eq!(loaded.config.host, "127.0.0.2", "toml beats default");
    assert_eq!(
        loaded.config.upstream, "http://process.invalid/v1",
        "trailing slash trimmed"
    );
    assert_eq!(loaded.config.log_level, LogLevel::Debug);

    let flags = Flags {
        port: Some(1004),
        ..Flags::default()
    };
    assert_eq!(
        load(&flags, &process).unwrap().config.port,
        1004,
        "flag beats all"
    );
}

#[test]
fn corvid_names_beat_legacy_names() {
    let home = tempfile::tempdir().unwrap();
    let process = env(
        home.path(),
        &[
            ("CORVID_DEFAULT_MODEL", "new"),
            ("SUPERGROK_ZED_DEFAULT_MODEL", "old"),
        ],
    );
    assert_eq!(
        load(&Flags::default(), &process)
            .unwrap()
            .config
            .default_model,
        "new"
    );
}

#[test]
fn every_legacy_env_name_is_honoured() {
    let home = tempfile::tempdir().unwrap();
    let process = env(
        home.path(),
        &[
            ("SUPERGROK_ZED_HOST", "::1"),
            ("SUPERGROK_ZED_PORT", "9999"),
            ("SUPERGROK_ZED_DEFAULT_MODEL", "grok-4.5"),
            ("SUPERGROK_ZED_UPSTREAM", "http://127.0.0.1:1/v1"),
            ("SUPERGROK_ZED_LOG_LEVEL", "WARNING"),
            ("SUPERGROK_ZED_ALLOW_REMOTE", "yes"),
            ("SUPERGROK_ZED_AUTH_MODE", "oauth"),
            ("SUPERGROK_ZED_COMPLETIONS_BACKEND", "chat"),
            ("SUPERGROK_ZED_COMPLETIONS_ENABLED", "false"),
        ],
    );
    let config = load(&Flags::default(), &process).unwrap().config;
    assert_eq!(config.host, "::1");
    assert_eq!(config.port, 9999);
    assert_eq!(config.default_model, "grok-4.5");
    assert_eq!(config.upstream, "http://127.0.0.1:1/v1");
    assert_eq!(config.log_level, LogLevel::Warn);
    assert!(config.allow_remote);
    assert_eq!(config.auth_mode, AuthMode::OAuth);
    assert_eq!(config.completions_backend, CompletionsBackend::Chat);
    assert!(!config.completions_enabled);
    assert_eq!(config.local_base_url(), "http://[::1]:9999");
}

#[test]
fn config_and_env_paths_can_be_pointed_elsewhere() {
    let home = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    fs::write(other.path().join("custom.toml"), "port = 4242\n").unwrap();
    fs::write(other.path().join("secrets"), "XAI_API_KEY=from-custom\n").unwrap();
    let process = env(
        home.path(),
        &[
            (
                "SUPERGROK_ZED_CONFIG",
                other.path().join("custom.toml").to_str().unwrap(),
            ),
            ("CORVID_ENV", other.path().join("secrets").to_str().unwrap()),
        ],
    );
    let loaded = load(&Flags::default(), &process).unwrap();
    assert_eq!(loaded.config.port, 4242);
    assert_eq!(loaded.secret("XAI_API_KEY").as_deref(), Some("from-custom"));
}

#[test]
fn secrets_prefer_process_env_and_skip_empty_values() {
    let home = tempfile::tempdir().unwrap();
    fs::write(
        home.path().join("env"),
        "XAI_API_KEY=file-key\nXAI_ACCESS_TOKEN=file-token\n",
    )
    .unwrap();
    let process = env(
        home.path(),
        &[("XAI_API_KEY", "process-key"), ("XAI_ACCESS_TOKEN", "  ")],
    );
    let loaded = load(&Flags::default(), &process).unwrap();
    assert_eq!(loaded.secret("XAI_API_KEY").as_deref(), Some("process-key"));
    assert_eq!(
        loaded.secret("XAI_ACCESS_TOKEN").as_deref(),
        Some("file-token")
    );
    assert_eq!(loaded.secret("XAI_REFRESH_TOKEN"), None);
}

#[test]
fn invalid_auth_mode_falls_back_with_a_warning() {
    let home = tempfile::tempdir().unwrap();
    let process = env(home.path(), &[("CORVID_AUTH_MODE", "password")]);
    let loaded = load(&Flags::default(), &process).unwrap();
    assert_eq!(loaded.config.auth_mode, AuthMode::ApiKey);
    assert_eq!(loaded.warnings.len(), 1);
    let warning = &loaded.warnings[0];
    assert!(
        warning.contains("auth_mode") && warning.contains("api_key, oauth"),
        "{warning}"
    );
    assert!(warning.contains("CORVID_AUTH_MODE"), "{warning}");
}

#[test]
fn invalid_values_name_the_key_and_accepted_values() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "CORVID_PORT",
            "eighty",
            &["`port`", "CORVID_PORT", "integer"],
        ),
        (
            "CORVID_LOG_LEVEL",
            "loud",
            &["`log_level`", "trace, debug, info"],
        ),
        (
            "CORVID_COMPLETIONS_BACKEND",
            "legacy",
            &["`completions_backend`", "responses, chat"],
        ),
        (
            "CORVID_COMPLETIONS_ENABLED",
            "maybe",
            &["`completions_enabled`", "true"],
        ),
        ("CORVID_UPSTREAM", "ftp://x", &["`upstream`", "http"]),
    ];
    for (name, value, needles) in cases {
        let home = tempfile::tempdir().unwrap();
        let err = load(&Flags::default(), &env(home.path(), &[(name, value)])).unwrap_err();
        let message = err.to_string();
        for needle in *needles {
            assert!(
                message.contains(needle),
                "{name}={value}: {message} lacks {needle}"
            );
        }
    }
}

#[test]
fn toml_type_errors_name_the_key() {
    let home = tempfile::tempdir().unwrap();
    fs::write(home.path().join("config.toml"), "max_retries = \"many\"\n").unwrap();
    let message = load(&Flags::default(), &env(home.path(), &[]))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("`max_retries`") && message.contains("config.toml"),
        "{message}"
    );

    fs::write(home.path().join("config.toml"), "port = [1, 2]\n").unwrap();
    let message = load(&Flags::default(), &env(home.path(), &[]))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("`port`") && message.contains("array"),
        "{message}"
    );

    fs::write(home.path().join("config.toml"), "port = \n").unwrap();
    let message = load(&Flags::default(), &env(home.path(), &[]))
        .unwrap_err()
        .to_string();
    assert!(message.contains("could not parse"), "{message}");
}

#[test]
fn aliases_table_replaces_defaults_and_unknown_keys_warn() {
    let home = tempfile::tempdir().unwrap();
    fs::write(
        home.path().join("config.toml"),
        "mystery = 1\n[aliases]\nsupergrok = \"grok-4.5\"\nfast = \"grok-4-fast\"\n",
    )
    .unwrap();
    let loaded = load(&Flags::default(), &env(home.path(), &[])).unwrap();
    assert_eq!(loaded.config.resolve_model("supergrok"), "grok-4.5");
    assert_eq!(loaded.config.resolve_model("fast"), "grok-4-fast");
    assert_eq!(
        loaded.config.resolve_model("grok"),
        "grok",
        "table replaces the defaults"
    );
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].contains("mystery"));
}

#[test]
fn legacy_supergrok_zed_directory_is_read_as_is() {
    let xdg = tempfile::tempdir().unwrap();
    let legacy = xdg.path().join("supergrok-zed");
    fs::create_dir_all(&legacy).unwrap();
    fs::write(
        legacy.join("config.toml"),
        "port = 8788\nauth_mode = \"oauth\"\n",
    )
    .unwrap();
    fs::write(legacy.join("env"), "export XAI_ACCESS_TOKEN='tok'\n").unwrap();
    let process: HashMap<String, String> = [(
        "XDG_CONFIG_HOME".to_owned(),
        xdg.path().display().to_string(),
    )]
    .into();

    let loaded = load(&Flags::default(), &process).unwrap();
    assert!(loaded.paths.legacy);
    assert_eq!(loaded.paths.dir, legacy);
    assert_eq!(
        loaded.paths.database(),
        xdg.path().join("corvid").join("corvid.db")
    );
    assert_eq!(loaded.config.port, 8788);
    assert_eq!(loaded.config.auth_mode, AuthMode::OAuth);
    assert_eq!(loaded.secret("XAI_ACCESS_TOKEN").as_deref(), Some("tok"));

    // Once corvid has its own configuration, the legacy directory is no longer used.
    let own = xdg.path().join("corvid");
    fs::create_dir_all(&own).unwrap();
    fs::write(own.join("config.toml"), "port = 9000\n").unwrap();
    let loaded = load(&Flags::default(), &process).unwrap();
    assert!(!loaded.paths.legacy);
    assert_eq!(loaded.config.port, 9000);
}

#[test]
fn home_fallback_and_missing_home() {
    let home = tempfile::tempdir().unwrap();
    let process: HashMap<String, String> =
        [("HOME".to_owned(), home.path().display().to_string())].into();
    let paths = resolve_paths(|name| process.get(name).cloned()).unwrap();
    assert_eq!(paths.dir, home.path().join(".config").join("corvid"));
    assert_eq!(paths.env_file, paths.dir.join("env"));
    assert!(matches!(resolve_paths(|_| None), Err(ConfigError::NoHome)));
}

#[test]
fn price_tables() {
    let home = tempfile::tempdir().unwrap();
    fs::write(
        home.path().join("config.toml"),
        "[prices.\"grok-4.6\"]\ninput = 3\noutput = 15.0\ncached_input = 0.75\n",
    )
    .unwrap();
    let price = load(&Flags::default(), &env(home.path(), &[]))
        .unwrap()
        .config
        .prices["grok-4.6"];
    assert_eq!(
        price,
        crate::Price {
            input: 3.0,
            output: 15.0,
            cached_input: 0.75,
            cache_write: 3.0
        }
    );

    fs::write(home.path().join("config.toml"), "[prices.m]\ninput = 1\n").unwrap();
    let message = load(&Flags::default(), &env(home.path(), &[]))
        .unwrap_err()
        .to_string();
    assert!(message.contains("prices.m.output is required"), "{message}");
    fs::write(
        home.path().join("config.toml"),
        "[prices.m]\ninput = -1\noutput = 1\n",
    )
    .unwrap();
    let message = load(&Flags::default(), &env(home.path(), &[]))
        .unwrap_err()
        .to_string();
    assert!(message.contains("non-negative"), "{message}");
}

#[test]
fn provider_presets_and_overrides() {
    let home = tempfile::tempdir().unwrap();
    let config = load(
        &Flags::default(),
        &env(home.path(), &[("CORVID_UPSTREAM", "http://127.0.0.1:9/v1")]),
    )
    .unwrap()
    .config;
    let names: Vec<&str> = config.providers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["xai", "openai", "anthropic", "gemini", "ollama", "zed"]
    );
    let xai = config.provider("xai").unwrap();
    assert_eq!(
        xai.base_url, "http://127.0.0.1:9/v1",
        "the seed's upstream is the xai provider"
    );
    assert_eq!(xai.credential, crate::CredentialSource::XaiAuth);
    assert!(!config.provider("ollama").unwrap().explicit);
    assert_eq!(config.default_provider, "xai");

    fs::write(
        home.path().join("config.toml"),
        r#"
default_provider = "openai"
[providers.openai]
base_url = "http://127.0.0.1:10/v1/"
api_key_env = "MY_OPENAI_KEY"
headers = { "OpenAI-Organization" = "org-1" }
[providers.ollama]
[providers.local]
kind = "openai-responses"
base_url = "http://127.0.0.1:11/v1"
models = ["qwen3"]
[providers.local.model_rules.qwen3]
drop = ["temperature"]
max_output_tokens = 4096
"#,
    )
    .unwrap();
    let config = load(&Flags::default(), &env(home.path(), &[]))
        .unwrap()
        .config;
    let openai = config.provider("openai").unwrap();
    assert_eq!(openai.base_url, "http://127.0.0.1:10/v1");
    assert_eq!(
        openai.credential,
        crate::CredentialSource::Env(vec!["MY_OPENAI_KEY".to_owned()])
    );
    assert_eq!(
        openai.headers,
        [("OpenAI-Organization".to_owned(), "org-1".to_owned())]
    );
    assert!(openai.explicit);
    assert!(
        config.provider("ollama").unwrap().explicit,
        "an empty table switches a preset on"
    );
    let local = config.provider("local").unwrap();
    assert_eq!(local.kind, crate::ProviderKind::OpenAiResponses);
    assert_eq!(local.models, ["qwen3"]);
    assert_eq!(
        local.rule("qwen3"),
        Some(&crate::ModelRule {
            drop: vec!["temperature".to_owned()],
            max_output_tokens: Some(4096)
        })
    );
    assert_eq!(config.default_provider, "openai");
}

#[test]
fn provider_errors_name_the_key() {
    let cases = [
        (
            "[providers.x]\nbase_url = \"http://a\"\n",
            "providers.x.kind",
        ),
        (
            "[providers.x]\nkind = \"soap\"\nbase_url = \"http://a\"\n",
            "openai-chat, openai-responses",
        ),
        ("[providers.x]\nkind = \"gemini\"\n", "providers.x.base_url"),
        ("[providers.openai]\nbase_url = \"ftp://a\"\n", "http://"),
        (
            "[providers.openai]\nsecret = \"x\"\n",
            "providers.openai.secret",
        ),
        (
            "[providers.openai.model_rules.m]\nmax_output_tokens = -1\n",
            "positive integer",
        ),
        ("default_provider = \"nobody\"\n", "`default_provider`"),
    ];
    for (text, needle) in cases {
        let home = tempfile::tempdir().unwrap();
        fs::write(home.path().join("config.toml"), text).unwrap();
        let message = load(&Flags::default(), &env(home.path(), &[]))
            .unwrap_err()
            .to_string();
        assert!(message.contains(needle), "{text:?}: {message}");
    }
}

/// Issue 10, seen as a new user: a secrets file other users can read is used, but never
/// silently: the warning names the file and the `chmod` that fixes it.
#[cfg(unix)]
#[test]
fn a_world_readable_env_file_is_warned_about() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let env_file = home.path().join("env");
    fs::write(&env_file, "XAI_API_KEY=xai-secret\n").unwrap();
    fs::set_permissions(&env_file, fs::Permissions::from_mode(0o644)).unwrap();
    let loaded = load(&Flags::default(), &env(home.path(), &[])).unwrap();
    assert_eq!(loaded.secret("XAI_API_KEY").as_deref(), Some("xai-secret"));
    let expected = format!("run `chmod 600 {}`", env_file.display());
    assert!(
        loaded
            .warnings
            .iter()
            .any(|warning| warning.contains(&expected)),
        "{:?}",
        loaded.warnings
    );
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|warning| warning.contains("xai-secret"))
    );

    fs::set_permissions(&env_file, fs::Permissions::from_mode(0o600)).unwrap();
    let loaded = load(&Flags::default(), &env(home.path(), &[])).unwrap();
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|warning| warning.contains("chmod")),
        "{:?}",
        loaded.warnings
    );
}

/// Issue 10, seen as a new user: every `config.toml` key, and the environment override of
/// every scalar one, is documented in the top-level README.
#[test]
fn every_setting_is_in_the_readme() {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    for key in KNOWN_KEYS {
        assert!(
            readme.contains(&format!("{key} =")) || readme.contains(&format!("[{key}")),
            "config.toml key `{key}` is not in README.md"
        );
        if !matches!(
            *key,
            "aliases"
                | "prices"
                | "providers"
                | "context_windows"
                | "web"
                | "store"
                | "mcp_servers"
                | "routes"
                | "router"
        ) {
            let name = format!("`{}`", key.to_ascii_uppercase());
            assert!(
                readme.contains(&name),
                "override {name} is not in README.md"
            );
        }
    }
    for name in ["`ALLOW_REMOTE`", "`CONFIG`", "`ENV`", "`CORVID_HOME`"] {
        assert!(readme.contains(name), "{name} is not in README.md");
    }
}

#[test]
fn the_sandbox_is_on_unless_turned_off() {
    let home = tempfile::tempdir().unwrap();
    let loaded = load(&Flags::default(), &env(home.path(), &[])).unwrap();
    assert_eq!(loaded.config.sandbox, SandboxSetting::On);
    fs::write(home.path().join("config.toml"), "sandbox = \"off\"\n").unwrap();
    let loaded = load(&Flags::default(), &env(home.path(), &[])).unwrap();
    assert_eq!(loaded.config.sandbox, SandboxSetting::Off);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let loaded = load(
        &Flags::default(),
        &env(home.path(), &[("CORVID_SANDBOX", "on")]),
    )
    .unwrap();
    assert_eq!(loaded.config.sandbox, SandboxSetting::On);
    fs::write(home.path().join("config.toml"), "sandbox = \"maybe\"\n").unwrap();
    let error = load(&Flags::default(), &env(home.path(), &[])).unwrap_err();
    assert!(error.to_string().contains("sandbox"), "{error}");
    assert!(error.to_string().contains("on, off"), "{error}");
}

#[test]
fn the_approval_policy_is_ask_unless_the_file_or_the_env_says_otherwise() {
    let home = tempfile::tempdir().unwrap();
    let loaded = load(&Flags::default(), &env(home.path(), &[])).unwrap();
    assert_eq!(loaded.config.approval, ApprovalSetting::Ask);
    fs::write(
        home.path().join("config.toml"),
        "# mine\napproval = \" Auto-Edit \"\n",
    )
    .unwrap();
    let loaded = load(&Flags::default(), &env(home.path(), &[])).unwrap();
    assert_eq!(loaded.config.approval, ApprovalSetting::AutoEdit);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let loaded = load(
        &Flags::default(),
        &env(home.path(), &[("CORVID_APPROVAL", "full-auto")]),
    )
    .unwrap();
    assert_eq!(loaded.config.approval, ApprovalSetting::FullAuto);
    fs::write(home.path().join("config.toml"), "approval = \"yolo\"\n").unwrap();
    let error = load(&Flags::default(), &env(home.path(), &[])).unwrap_err();
    let text = error.to_string();
    assert!(text.contains("`approval`"), "{text}");
    assert!(text.contains("config.toml"), "{text}");
    assert!(text.contains("ask, auto-edit, full-auto"), "{text}");
    assert!(text.contains("yolo"), "{text}");
    fs::write(home.path().join("config.toml"), "approval = true\n").unwrap();
    let error = load(&Flags::default(), &env(home.path(), &[])).unwrap_err();
    assert!(error.to_string().contains("approval"), "{error}");
}

#[test]
fn context_windows_are_read_from_the_table_and_the_default() {
    let home = tempfile::tempdir().unwrap();
    let loaded = load(&Flags::default(), &env(home.path(), &[])).unwrap();
    assert_eq!(loaded.config.context_window, None);
    assert!(loaded.config.context_windows.is_empty());
    fs::write(
        home.path().join("config.toml"),
        "context_window = 64_000\n\n[context_windows]\n\"grok-4.6\" = 256_000\n\"ollama/qwen3\" = \"32,768\"\n",
    )
    .unwrap();
    let loaded = load(&Flags::default(), &env(home.path(), &[])).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let config = &loaded.config;
    assert_eq!(config.context_window, Some(64_000));
    assert_eq!(config.context_windows["grok-4.6"], 256_000);
    assert_eq!(config.context_windows["ollama/qwen3"], 32_768);
    // As written, through an alias, as provider/model, as the bare upstream name; else the
    // default.
    assert_eq!(
        config.configured_context_window("grok-4.6", None),
        Some(256_000)
    );
    assert_eq!(
        config.configured_context_window("supergrok", None),
        Some(256_000)
    );
    assert_eq!(
        config.configured_context_window("qwen3", Some(("ollama", "qwen3"))),
        Some(32_768)
    );
    assert_eq!(
        config.configured_context_window("xai/grok-4.6", Some(("xai", "grok-4.6"))),
        Some(256_000)
    );
    assert_eq!(
        config.configured_context_window(
            "claude-sonnet-4-5",
            Some(("anthropic", "claude-sonnet-4-5"))
        ),
        Some(64_000)
    );
    // The environment overrides the scalar.
    let loaded = load(
        &Flags::default(),
        &env(home.path(), &[("CORVID_CONTEXT_WINDOW", "100000")]),
    )
    .unwrap();
    assert_eq!(loaded.config.context_window, Some(100_000));
}

#[test]
fn invalid_context_windows_are_refused_naming_the_key() {
    let home = tempfile::tempdir().unwrap();
    for (text, key) in [
        ("context_window = 0\n", "context_window"),
        ("context_window = -5\n", "context_window"),
        ("context_window = \"lots\"\n", "context_window"),
        ("context_window = 999\n", "context_window"),
        ("context_window = [1]\n", "context_window"),
        ("[context_windows]\n\"grok-4.6\" = 0\n", "context_windows"),
        (
            "[context_windows]\n\"grok-4.6\" = \"big\"\n",
            "context_windows",
        ),
        ("[context_windows]\n\"grok-4.6\" = 2.5\n", "context_windows"),
        ("context_windows = 5\n", "context_windows"),
    ] {
        fs::write(home.path().join("config.toml"), text).unwrap();
        let error = load(&Flags::default(), &env(home.path(), &[]))
            .unwrap_err()
            .to_string();
        assert!(error.contains(&format!("`{key}`")), "{text}: {error}");
    }
    fs::write(home.path().join("config.toml"), "").unwrap();
    let error = load(
        &Flags::default(),
        &env(home.path(), &[("CORVID_CONTEXT_WINDOW", "128k")]),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("`context_window`"), "{error}");
    assert!(error.contains("CORVID_CONTEXT_WINDOW"), "{error}");
}

#[test]
fn capabilities_are_preset_and_configurable_per_provider() {
    let home = tempfile::tempdir().unwrap();
    fs::write(
        home.path().join("config.toml"),
        r#"
[providers.openai]
serves_responses = false
[providers.local]
kind = "openai-chat"
base_url = "http://127.0.0.1:11/v1"
serves_responses = true
accepts_reasoning = false
xai_field_rules = true
"#,
    )
    .unwrap();
    let config = load(&Flags::default(), &env(home.path(), &[]))
        .unwrap()
        .config;
    let capabilities = |name: &str| config.provider(name).unwrap().capabilities;
    assert_eq!(
        capabilities("xai"),
        crate::Capabilities {
            serves_responses: true,
            accepts_reasoning: false,
            xai_field_rules: true,
        }
    );
    assert!(!capabilities("openai").serves_responses);
    assert!(!capabilities("openai").accepts_reasoning);
    assert_eq!(capabilities("ollama"), crate::Capabilities::PLAIN);
    assert_eq!(
        capabilities("local"),
        crate::Capabilities {
            serves_responses: true,
            accepts_reasoning: false,
            xai_field_rules: true,
        }
    );
    fs::write(
        home.path().join("config.toml"),
        "[providers.openai]\nserves_responses = \"yes\"\n",
    )
    .unwrap();
    let error = load(&Flags::default(), &env(home.path(), &[])).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("providers.openai.serves_responses"),
        "{error}"
    );
}
