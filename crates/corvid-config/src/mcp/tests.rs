use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;

fn project(text: &str) -> Result<McpFile, ConfigError> {
    parse_mcp_json(text, Path::new("/p/.corvid/mcp.json"), McpScope::Project)
}

fn global(text: &str) -> Result<(McpSettings, Vec<String>), ConfigError> {
    let table: toml::Table = text.parse().unwrap();
    let mut warnings = Vec::new();
    let max_tools = table.get("mcp_max_tools").map(|value| {
        (
            format!("{}", value.as_integer().unwrap()),
            "config.toml".to_owned(),
        )
    });
    let callback_port = table.get("mcp_oauth_callback_port").map(|value| {
        (
            format!("{}", value.as_integer().unwrap()),
            "config.toml".to_owned(),
        )
    });
    let settings = read_global(
        table.get("mcp_servers"),
        max_tools,
        callback_port,
        Path::new("/home/u/.config/corvid/config.toml"),
        &mut warnings,
    )?;
    Ok((settings, warnings))
}

/// Claude Code's `.mcp.json`, as `claude mcp add --scope project` writes it.
#[test]
fn claude_codes_file_is_read_as_written() {
    let file = project(
        r#"{
          "mcpServers": {
            "filesystem": {
              "type": "stdio",
              "command": "npx",
              "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/work"],
              "env": {"LOG_LEVEL": "debug", "API_KEY": "${MY_KEY:-none}"}
            },
            "sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp",
                       "headers": {"Authorization": "Bearer ${SENTRY_TOKEN}"}}
          }
        }"#,
    )
    .unwrap();
    assert_eq!(file.warnings, Vec::<String>::new());
    let [filesystem, sentry] = file.servers.as_slice() else {
        panic!("{:?}", file.servers)
    };
    assert_eq!(filesystem.name, "filesystem");
    assert_eq!(
        filesystem.transport,
        McpTransport::Stdio {
            command: "npx".to_owned(),
            args: vec![
                "-y".to_owned(),
                "@modelcontextprotocol/server-filesystem".to_owned(),
                "${HOME}/work".to_owned()
            ],
            env: [("API_KEY", "${MY_KEY:-none}"), ("LOG_LEVEL", "debug")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            env_vars: Vec::new(),
            cwd: None,
        }
    );
    assert!(filesystem.enabled);
    assert_eq!(filesystem.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
    assert_eq!(filesystem.tool_timeout, DEFAULT_TOOL_TIMEOUT);
    assert_eq!(
        filesystem.sandbox,
        McpSandbox::default_for(McpScope::Project)
    );
    assert!(!filesystem.sandbox.write_outside);
    assert_eq!(filesystem.origin.scope, McpScope::Project);
    assert_eq!(
        sentry.transport,
        McpTransport::Http {
            url: "https://mcp.sentry.dev/mcp".to_owned(),
            headers: [(
                "Authorization".to_owned(),
                "Bearer ${SENTRY_TOKEN}".to_owned()
            )]
            .into_iter()
            .collect(),
            env_headers: BTreeMap::new(),
            bearer_token_env_var: None,
        }
    );
}

/// Cursor's `.cursor/mcp.json`: no `type`, a `url` alone means HTTP, `${env:NAME}` references.
#[test]
fn cursors_file_is_read_as_written() {
    let file = project(
        r#"{"mcpServers": {
             "remote": {"url": "http://127.0.0.1:3001/mcp", "headers": {"API_KEY": "${env:KEY}"}},
             "local": {"command": "python3", "args": ["server.py"], "env": {"A": "1"}}
           }}"#,
    )
    .unwrap();
    assert!(matches!(
        file.servers[0].transport,
        McpTransport::Http { .. }
    ));
    assert!(matches!(
        file.servers[1].transport,
        McpTransport::Stdio { .. }
    ));
}

/// Codex's `[mcp_servers.<name>]`, with every key corvid reads.
#[test]
fn codexs_tables_are_read_with_their_keys() {
    let (settings, warnings) = global(
        r#"
mcp_max_tools = 40

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]
env = { "DOCS_HOME" = "/srv/docs" }
env_vars = ["DOCS_TOKEN", { name = "OTHER", source = "local" }]
cwd = "/srv"
startup_timeout_sec = 12.5
tool_timeout_sec = 60
enabled_tools = ["search", "open"]
disabled_tools = ["open"]
default_tools_approval_mode = "prompt"

[mcp_servers.tracker]
url = "https://mcp.example.com/mcp"
always_allow = "server"
bearer_token_env_var = "TRACKER_TOKEN"
http_headers = { "X-Team" = "core" }
env_http_headers = { "X-Key" = "TRACKER_KEY" }
enabled = false
startup_timeout_ms = 2500
"#,
    )
    .unwrap();
    assert_eq!(settings.max_tools(), 40);
    assert_eq!(
        warnings,
        vec![
            "unknown key `mcp_servers.docs.default_tools_approval_mode` in /home/u/.config/corvid/config.toml (ignored)"
                .to_owned()
        ]
    );
    let docs = &settings.servers[0];
    assert_eq!(docs.startup_timeout, Duration::from_secs_f64(12.5));
    assert_eq!(docs.tool_timeout, Duration::from_secs(60));
    assert!(docs.offers("search"));
    assert!(!docs.offers("open"), "disabled_tools wins");
    assert!(!docs.offers("other"), "not in enabled_tools");
    assert_eq!(docs.sandbox, McpSandbox::default_for(McpScope::Global));
    let McpTransport::Stdio { env_vars, cwd, .. } = &docs.transport else {
        panic!()
    };
    assert_eq!(env_vars, &vec!["DOCS_TOKEN".to_owned(), "OTHER".to_owned()]);
    assert_eq!(cwd.as_deref(), Some(Path::new("/srv")));
    let tracker = &settings.servers[1];
    assert!(!tracker.enabled);
    assert!(tracker.always_allow_server);
    assert!(!docs.always_allow_server);
    assert_eq!(tracker.startup_timeout, Duration::from_millis(2500));
    let McpTransport::Http {
        headers,
        env_headers,
        bearer_token_env_var,
        ..
    } = &tracker.transport
    else {
        panic!()
    };
    assert_eq!(headers.get("X-Team").map(String::as_str), Some("core"));
    assert_eq!(
        env_headers.get("X-Key").map(String::as_str),
        Some("TRACKER_KEY")
    );
    assert_eq!(bearer_token_env_var.as_deref(), Some("TRACKER_TOKEN"));
}

#[test]
fn errors_name_the_file_and_the_key() {
    let cases = [
        (
            r#"[mcp_servers.docs]
command = "x"
url = "http://127.0.0.1/mcp""#,
            "`mcp_servers.docs`",
        ),
        (
            r#"[mcp_servers.docs]
url = "http://127.0.0.1/mcp"
type = "http"
args = ["a"]"#,
            "`mcp_servers.docs.args`",
        ),
        (
            "[mcp_servers.docs]\ncommand = 3",
            "`mcp_servers.docs.command`",
        ),
        (
            "[mcp_servers.docs]\ncommand = \"x\"\ntool_timeout_sec = -1",
            "`mcp_servers.docs.tool_timeout_sec`",
        ),
        (
            "[mcp_servers.docs]\nurl = \"ftp://x\"",
            "`mcp_servers.docs.url`",
        ),
        ("[mcp_servers.docs]\nenabled = true", "`mcp_servers.docs`"),
        ("mcp_max_tools = 0", "`mcp_max_tools`"),
        (
            "[mcp_servers.docs]\ncommand = \"x\"\nalways_allow = \"all\"",
            "`mcp_servers.docs.always_allow`",
        ),
        (
            "[mcp_servers.docs]\ncommand = \"x\"\nsandbox = { net = true }",
            "`mcp_servers.docs.sandbox.net`",
        ),
    ];
    for (text, key) in cases {
        let error = global(text).unwrap_err().to_string();
        assert!(error.contains(key), "{text}: {error}");
        assert!(error.contains("config.toml"), "{text}: {error}");
    }
    let error =
        project(r#"{"mcpServers": {"old": {"type": "sse", "url": "http://127.0.0.1/sse"}}}"#)
            .unwrap_err()
            .to_string();
    assert!(error.contains("`mcpServers.old.type`"), "{error}");
    assert!(error.contains("/p/.corvid/mcp.json"), "{error}");
    assert!(error.contains("Streamable HTTP"), "{error}");
    let error = project("{not json").unwrap_err().to_string();
    assert!(error.contains("/p/.corvid/mcp.json"), "{error}");
}

#[test]
fn project_servers_replace_global_ones_of_the_same_name() {
    let (settings, _) =
        global("[mcp_servers.a]\ncommand = \"global-a\"\n[mcp_servers.b]\ncommand = \"global-b\"")
            .unwrap();
    let file = project(r#"{"mcpServers": {"b": {"command": "project-b"}}}"#).unwrap();
    let merged = merge_servers(&settings.servers, &file.servers);
    let commands: Vec<(&str, &str)> = merged
        .iter()
        .map(|server| match &server.transport {
            McpTransport::Stdio { command, .. } => (server.name.as_str(), command.as_str()),
            McpTransport::Http { url, .. } => (server.name.as_str(), url.as_str()),
        })
        .collect();
    assert_eq!(commands, vec![("a", "global-a"), ("b", "project-b")]);
}

#[test]
fn references_expand_like_claude_code_and_cursor() {
    let lookup = |name: &str| match name {
        "HOME" => Some("/home/u".to_owned()),
        "EMPTY" => Some(String::new()),
        _ => None,
    };
    assert_eq!(expand("${HOME}/work", &lookup).unwrap(), "/home/u/work");
    assert_eq!(expand("${env:HOME}", &lookup).unwrap(), "/home/u");
    assert_eq!(expand("a${MISSING:-b}c", &lookup).unwrap(), "abc");
    assert_eq!(expand("${EMPTY:-fallback}", &lookup).unwrap(), "fallback");
    assert_eq!(expand("$HOME and $$", &lookup).unwrap(), "$HOME and $$");
    let unset = expand("Bearer ${TOKEN}", &lookup).unwrap_err();
    assert_eq!(
        unset,
        ExpandError::Unset {
            name: "TOKEN".to_owned()
        }
    );
    assert_eq!(unset.to_string(), "the variable TOKEN is not set");
    assert!(expand("${HOME", &lookup).is_err());
    assert!(expand("${a b}", &lookup).is_err());
}

/// OAuth settings as Codex writes them in config.toml and Claude Code in `.mcp.json`.
#[test]
fn oauth_settings_are_read_in_both_spellings() {
    let (settings, warnings) = global(
        r#"
mcp_oauth_callback_port = 1455

[mcp_servers.linear]
url = "https://mcp.linear.app/mcp"
scopes = ["read", "write"]

[mcp_servers.linear.oauth]
client_id = "corvid-desktop"
client_secret_env_var = "LINEAR_SECRET"
callback_port = 8976
colour = "blue"

[mcp_servers.plain]
url = "https://mcp.example.com/mcp"
oauth = false
"#,
    )
    .unwrap();
    assert_eq!(settings.oauth_callback_port, Some(1455));
    assert_eq!(
        warnings,
        vec![
            "unknown key `mcp_servers.linear.oauth.colour` in /home/u/.config/corvid/config.toml (ignored)"
                .to_owned()
        ]
    );
    assert_eq!(
        settings.servers[0].oauth,
        McpOAuth {
            disabled: false,
            client_id: Some("corvid-desktop".to_owned()),
            client_secret_env_var: Some("LINEAR_SECRET".to_owned()),
            scopes: vec!["read".to_owned(), "write".to_owned()],
            callback_port: Some(8976),
            client_metadata_url: None,
        }
    );
    assert!(settings.servers[1].oauth.disabled);

    let file = project(
        r#"{"mcpServers": {"notion": {"type": "http", "url": "https://mcp.notion.com/mcp",
             "oauth": {"clientId": "abc", "callbackPort": 3118, "scopes": "read offline_access",
                       "clientMetadataUrl": "https://corvid.example/client.json"}}}}"#,
    )
    .unwrap();
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    let oauth = &file.servers[0].oauth;
    assert_eq!(oauth.client_id.as_deref(), Some("abc"));
    assert_eq!(oauth.callback_port, Some(3118));
    assert_eq!(oauth.scopes, vec!["read", "offline_access"]);
    assert_eq!(
        oauth.client_metadata_url.as_deref(),
        Some("https://corvid.example/client.json")
    );
}

#[test]
fn oauth_settings_are_checked() {
    let error = |text: &str| project(text).unwrap_err().to_string();
    let port = error(
        r#"{"mcpServers": {"a": {"url": "https://x.example/mcp", "oauth": {"callbackPort": 70000}}}}"#,
    );
    assert!(port.contains("mcpServers.a.oauth.callback_port"), "{port}");
    let stdio = error(r#"{"mcpServers": {"a": {"command": "x", "oauth": {"clientId": "c"}}}}"#);
    assert!(stdio.contains("has both"), "{stdio}");
    let lone_secret = error(
        r#"{"mcpServers": {"a": {"url": "https://x.example/mcp", "oauth": {"client_secret_env_var": "S"}}}}"#,
    );
    assert!(lone_secret.contains("oauth.client_id"), "{lone_secret}");
    let cimd = error(
        r#"{"mcpServers": {"a": {"url": "https://x.example/mcp", "oauth": {"client_metadata_url": "http://x/c.json"}}}}"#,
    );
    assert!(cimd.contains("https://"), "{cimd}");
    let zero = global("mcp_oauth_callback_port = 0\n")
        .unwrap_err()
        .to_string();
    assert!(zero.contains("mcp_oauth_callback_port"), "{zero}");
}
