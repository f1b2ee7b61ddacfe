use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use corvid_config::{McpScope, McpServer, parse_mcp_json};
use corvid_tools::Sandbox;

use super::McpEnvironment;

fn environment() -> McpEnvironment {
    McpEnvironment {
        project: "/work/project".into(),
        sandbox: Sandbox::off(),
        lookup: Arc::new(|name| (name == "TOKEN").then(|| "from-corvid".to_owned())),
        protected: Arc::new(Vec::new()),
        oauth: None,
    }
}

fn server(scope: McpScope) -> McpServer {
    let text =
        r#"{"mcpServers": {"docs": {"command": "run-${TOKEN}", "env": {"KEY": "${TOKEN}"}}}}"#;
    let mut file = parse_mcp_json(text, Path::new("/x/mcp.json"), scope).unwrap();
    file.servers.remove(0)
}

fn expanded(scope: McpScope) -> (String, String) {
    let environment = environment();
    let server = server(scope);
    let reader = environment.reader(&server);
    let corvid_config::McpTransport::Stdio { command, env, .. } = &server.transport else {
        panic!("a stdio server");
    };
    let env: &BTreeMap<String, String> = env;
    (
        reader.expand("command", command).unwrap(),
        reader.expand("env.KEY", &env["KEY"]).unwrap(),
    )
}

#[test]
fn configured_servers_expand_variables_from_corvids_environment() {
    assert_eq!(
        expanded(McpScope::Global),
        ("run-from-corvid".to_owned(), "from-corvid".to_owned())
    );
}

#[test]
fn an_editors_servers_are_used_as_written() {
    // The editor resolved its values; corvid's environment must not fill in what is left.
    assert_eq!(
        expanded(McpScope::Editor),
        ("run-${TOKEN}".to_owned(), "${TOKEN}".to_owned())
    );
    let environment = environment();
    let server = server(McpScope::Editor);
    assert_eq!(environment.reader(&server).variable("TOKEN").unwrap(), None);
}
