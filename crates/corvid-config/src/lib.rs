//! corvid's configuration: where files live, the `config.toml` schema and its defaults, the
//! `CORVID_*` / `SUPERGROK_ZED_*` environment overrides, and the secrets file `env`.
//!
//! Precedence, highest first: command-line flag > process env > env file > `config.toml` >
//! built-in default. This crate does no network IO and knows nothing about HTTP.

mod atomic;
pub mod catalog;
mod edit;
mod env_file;
mod error;
mod load;
mod mcp;
mod paths;
mod providers;
mod routing;
mod schema;
mod store;
pub mod time;
mod value;
mod web;

pub use atomic::{FileMode, write_atomic};
pub use catalog::{Catalog, ModelFacts, catalog};
pub use edit::ConfigDocument;
pub use env_file::EnvFile;
pub use error::ConfigError;
pub use load::{Flags, Loaded, load};
pub use mcp::{
    DEFAULT_MAX_TOOLS, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ExpandError, McpEntry,
    McpFile, McpOAuth, McpOrigin, McpSandbox, McpScope, McpServer, McpSettings, McpTransport,
    PROJECT_MCP_FILE, ProjectFile, expand, merge_servers, parse_mcp_json, read_project_mcp,
};
pub use paths::{Paths, resolve_paths};
pub use providers::{
    Capabilities, CredentialSource, ModelRule, ProviderConfig, ProviderKind, XAI_MODELS,
};
pub use routing::{DEFAULT_LONG_CONTEXT_THRESHOLD, RouteTargets, RoutingConfig, TaskRules};
pub use schema::{
    ApprovalSetting, AuthMode, CompletionsBackend, Config, DEFAULT_PORT, LogLevel, Price,
    SandboxSetting,
};
pub use store::StoreConfig;
pub use value::is_truthy;
pub use web::{HostRule, SearchBackend, WebConfig};
