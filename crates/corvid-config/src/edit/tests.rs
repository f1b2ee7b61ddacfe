use std::collections::BTreeMap;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;
use crate::mcp::{McpTransport, read_global};

const COMMENTED: &str = "\
# my corvid settings
default_model = \"grok-4\" # the one I like

[aliases]
# short names
fast = \"grok-code-fast-1\"
old = \"grok-3\"

[providers.xai]
enabled = true # keep on
";

fn document(dir: &Path, text: &str) -> ConfigDocument {
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    ConfigDocument::read(&path).unwrap()
}

/// The servers of `text` as the loader reads them.
fn servers_of(text: &str) -> Vec<crate::McpServer> {
    let table: toml::Table = text.parse().unwrap();
    let mut warnings = Vec::new();
    let settings = read_global(
        table.get("mcp_servers"),
        None,
        None,
        Path::new("config.toml"),
        &mut warnings,
    )
    .unwrap();
    assert_eq!(warnings, Vec::<String>::new());
    settings.servers
}

#[test]
fn changing_values_keeps_every_comment_and_the_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = document(dir.path(), COMMENTED);
    config.set_default_model("grok-4-fast");
    config.set_approval("auto-edit");
    config
        .replace_strings(
            &["aliases"],
            &BTreeMap::from([("fast".to_owned(), "grok-4-fast".to_owned())]),
        )
        .unwrap();
    config.set(&["providers", "xai", "enabled"], false).unwrap();
    config
        .set(
            &["providers", "ollama", "base_url"],
            "http://127.0.0.1:11434",
        )
        .unwrap();
    config.save().unwrap();
    assert_eq!(
        std::fs::read_to_string(config.path()).unwrap(),
        "\
# my corvid settings
default_model = \"grok-4-fast\" # the one I like
approval = \"auto-edit\"

[aliases]
# short names
fast = \"grok-4-fast\"

[providers.xai]
enabled = false # keep on

[providers.ollama]
base_url = \"http://127.0.0.1:11434\"
"
    );
    let read_back = ConfigDocument::read(config.path()).unwrap();
    assert_eq!(read_back.text(&["default_model"]), Some("grok-4-fast"));
    assert_eq!(
        read_back.flag(&["providers", "xai", "enabled"]),
        Some(false)
    );
    assert_eq!(
        read_back.strings(&["aliases"]),
        Some(BTreeMap::from([(
            "fast".to_owned(),
            "grok-4-fast".to_owned()
        )]))
    );
}

#[test]
fn a_file_of_only_comments_keeps_them_on_top() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = document(dir.path(), "# written by hand\n# keep me\n");
    config.set_default_model("m");
    assert_eq!(
        config.render(),
        "# written by hand\n# keep me\n\ndefault_model = \"m\"\n"
    );
}

#[test]
fn a_missing_file_is_created_with_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new").join("config.toml");
    let mut config = ConfigDocument::read(&path).unwrap();
    config.set_default_model("m");
    config.save().unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "default_model = \"m\"\n"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
    }
}

#[test]
fn a_key_that_is_not_a_table_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = document(dir.path(), "aliases = \"oops\"\n");
    let error = config
        .replace_strings(&["aliases"], &BTreeMap::new())
        .unwrap_err();
    assert!(
        matches!(&error, ConfigError::NotATable { key, .. } if key == "aliases"),
        "{error}"
    );
}

#[test]
fn a_saved_file_is_replaced_by_rename_never_rewritten_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = document(dir.path(), "default_model = \"a\"\n");
    // A second name for the old file: an in-place write would change it too.
    let old = dir.path().join("old.toml");
    std::fs::hard_link(config.path(), &old).unwrap();
    config.set_default_model("b");
    config.save().unwrap();
    assert_eq!(
        std::fs::read_to_string(&old).unwrap(),
        "default_model = \"a\"\n"
    );
    assert_eq!(
        std::fs::read_to_string(config.path()).unwrap(),
        "default_model = \"b\"\n"
    );
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["config.toml", "old.toml"], "no temporary file left");
}

#[cfg(unix)]
#[test]
fn a_private_config_stays_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let mut config = document(dir.path(), "default_model = \"a\"\n");
    std::fs::set_permissions(config.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
    config.set_default_model("b");
    config.save().unwrap();
    let mode = std::fs::metadata(config.path())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn an_added_server_reads_back_as_written_and_the_comments_stay() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = document(dir.path(), COMMENTED);
    let docs = McpEntry::Stdio {
        command: "npx".to_owned(),
        args: vec!["-y".to_owned(), "@docs/mcp \"latest\"".to_owned()],
        env: BTreeMap::from([("DOCS_KEY".to_owned(), "${DOCS_KEY}".to_owned())]),
    };
    let remote = McpEntry::Http {
        url: "https://mcp.example/mcp".to_owned(),
        headers: BTreeMap::from([("Authorization".to_owned(), "Bearer ${T}".to_owned())]),
    };
    config.add_mcp_server("docs", &docs).unwrap();
    config.add_mcp_server("remote-1", &remote).unwrap();
    let text = config.render();
    assert!(text.starts_with(COMMENTED), "{text}");
    let servers = servers_of(&text);
    assert_eq!(
        servers
            .iter()
            .map(|server| &server.name)
            .collect::<Vec<_>>(),
        ["docs", "remote-1"]
    );
    assert_eq!(
        servers[0].transport,
        McpTransport::Stdio {
            command: "npx".to_owned(),
            args: vec!["-y".to_owned(), "@docs/mcp \"latest\"".to_owned()],
            env: BTreeMap::from([("DOCS_KEY".to_owned(), "${DOCS_KEY}".to_owned())]),
            env_vars: Vec::new(),
            cwd: None,
        }
    );
    assert_eq!(
        servers[1].transport,
        McpTransport::Http {
            url: "https://mcp.example/mcp".to_owned(),
            headers: BTreeMap::from([("Authorization".to_owned(), "Bearer ${T}".to_owned())]),
            env_headers: BTreeMap::new(),
            bearer_token_env_var: None,
        }
    );
    let error = config.add_mcp_server("docs", &docs).unwrap_err();
    assert!(
        matches!(error, ConfigError::AlreadyDefined { .. }),
        "{error}"
    );
    let error = config.add_mcp_server("bad name", &docs).unwrap_err();
    assert!(matches!(error, ConfigError::Invalid { .. }), "{error}");
}

#[test]
fn removing_a_server_takes_its_sub_tables_and_own_comment_and_leaves_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = document(
        dir.path(),
        "\
# top of my file

# the docs server
[mcp_servers.docs]
command = \"docs-mcp\"

[mcp_servers.docs.env]
KEY = \"v\"

# the one I keep
[mcp_servers.kept]
url = \"https://kept.example/mcp\"
",
    );
    config.remove_mcp_server("docs").unwrap();
    assert_eq!(
        config.render(),
        "\
# top of my file

# the one I keep
[mcp_servers.kept]
url = \"https://kept.example/mcp\"
"
    );
    assert_eq!(config.mcp_server_names(), ["kept"]);
    let error = config.remove_mcp_server("docs").unwrap_err();
    assert!(matches!(error, ConfigError::NotDefined { .. }), "{error}");
}

#[test]
fn an_inline_server_table_is_removed_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = document(
        dir.path(),
        "mcp_servers = { a = { command = \"a\" }, b = { command = \"b\" } }\n",
    );
    config.remove_mcp_server("a").unwrap();
    assert_eq!(
        servers_of(&config.render())
            .iter()
            .map(|server| server.name.as_str())
            .collect::<Vec<_>>(),
        ["b"]
    );
}

#[test]
fn removing_the_last_server_keeps_a_detached_comment_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = document(
        dir.path(),
        "default_model = \"m\"\n\n# servers below\n\n[mcp_servers.only]\ncommand = \"x\"\n",
    );
    config.remove_mcp_server("only").unwrap();
    let text = config.render();
    assert!(text.contains("# servers below"), "{text}");
    assert!(!text.contains("only"), "{text}");
    assert!(servers_of(&text).is_empty());
}
