//! corvid-mcp against real MCP servers nobody here wrote (`@modelcontextprotocol/server-everything`
//! and `server-filesystem`, from npm) and a misbehaving fixture on the official Python SDK
//! (`tests/mcp/fixture_server.py`). scripts/test installs them and sets `CORVID_MCP_SERVERS`
//! (their `node_modules`) and `CORVID_MCP_PYTHON` (a Python with `mcp`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod suite {
    mod agent;
    mod everything;
    mod failures;
    mod oauth;
    mod oauth_support;
    mod support;
    mod trust;
}
