//! What `scripts/test` installs for the tests and names in the environment: a Python with the
//! `mcp` SDK (`CORVID_MCP_PYTHON`) and the npm MCP servers (`CORVID_MCP_SERVERS`). Missing:
//! under CI a failure (the suite must not pass without them), elsewhere a loud skip.

use std::path::PathBuf;

/// A Python with the `mcp` SDK (tests/python/requirements.txt).
pub fn mcp_python() -> Option<PathBuf> {
    required(
        "CORVID_MCP_PYTHON",
        "a Python with the mcp SDK (tests/python/requirements.txt)",
    )
}

/// The `node_modules` folder holding the npm MCP servers (tests/clients/package.json).
pub fn mcp_servers() -> Option<PathBuf> {
    required(
        "CORVID_MCP_SERVERS",
        "the npm MCP servers (tests/clients/package.json)",
    )
}

fn required(variable: &str, what: &str) -> Option<PathBuf> {
    match std::env::var_os(variable).filter(|value| !value.is_empty()) {
        Some(value) => Some(PathBuf::from(value)),
        None if std::env::var_os("CI").is_some() => {
            panic!("{variable} is not set: under CI, scripts/test must install {what} and set it")
        }
        None => {
            eprintln!(
                "\n!!! SKIPPED: {variable} is not set, so {what} cannot be found. Run scripts/test, or set {variable} yourself.\n"
            );
            None
        }
    }
}
