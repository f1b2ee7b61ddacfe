//! Starting the transport of one server: a child process through corvid's sandbox (the same
//! spawn point as `bash`), or a Streamable HTTP client with the configured headers.
//!
//! A child's environment is corvid's minus every credential-like variable (even with the
//! sandbox off: a server gets the secrets its configuration names, no others), plus `env` with
//! its `${VAR}` references expanded, plus the `env_vars` it names. Its standard error is kept
//! (the last few KB) to explain a failure.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use corvid_config::{McpScope, McpServer, McpTransport, expand};
use corvid_tools::sandbox::is_secret_variable;
use corvid_tools::{Sandbox, Widening};
use http::{HeaderName, HeaderValue};
use parking_lot::Mutex;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::error::StartError;
use crate::oauth::{OAuthStore, SignIn};

/// Looks a variable up: the process environment, then corvid's env file.
pub type Lookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Where and how servers start.
#[derive(Clone)]
pub struct McpEnvironment {
    /// The project folder: a stdio server's working folder unless it names one.
    pub project: PathBuf,
    /// The sandbox every child process starts through.
    pub sandbox: Sandbox,
    /// Resolves `${VAR}` references, `env_vars`, `bearer_token_env_var`, `env_http_headers`.
    pub lookup: Lookup,
    /// corvid's own credentials (its provider keys and tokens, everything in its env file):
    /// a project's `.corvid/mcp.json`, which may come with a cloned repository, may not name
    /// them, or a server it defines could carry them off. `CORVID_*` and `SUPERGROK_ZED_*` are
    /// always corvid's.
    pub protected: Arc<Vec<String>>,
    /// Where `corvid mcp login` keeps HTTP servers' sign-ins; `None`: no server signs in (its
    /// 401 still says how to).
    pub oauth: Option<OAuthStore>,
}

impl std::fmt::Debug for McpEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpEnvironment")
            .field("project", &self.project)
            .field("sandbox", &self.sandbox)
            .finish_non_exhaustive()
    }
}

impl McpEnvironment {
    /// Whether `name` is one of corvid's own credentials.
    pub fn is_protected(&self, name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        upper.starts_with("CORVID_")
            || upper.starts_with("SUPERGROK_ZED_")
            || self.protected.iter().any(|protected| protected == name)
    }

    /// The variables `server` may read: `lookup`, with `${workspaceFolder}` (Cursor, VS Code)
    /// meaning the project folder; a project's server never sees corvid's own credentials. An
    /// editor's server (ACP) reads none: the editor resolved its values, and a `${…}` left in
    /// them is text, not a request for corvid's environment.
    pub(crate) fn reader<'a>(&'a self, server: &McpServer) -> Reader<'a> {
        Reader {
            environment: self,
            guarded: server.origin.scope == McpScope::Project,
            literal: server.origin.scope == McpScope::Editor,
        }
    }
}

/// Reads variables for one server.
pub(crate) struct Reader<'a> {
    environment: &'a McpEnvironment,
    guarded: bool,
    /// Values are used as written, and no variable is read.
    literal: bool,
}

impl Reader<'_> {
    pub(crate) fn variable(&self, name: &str) -> Result<Option<String>, StartError> {
        if self.literal {
            return Ok(None);
        }
        if name == "workspaceFolder" {
            return Ok(Some(self.environment.project.display().to_string()));
        }
        if self.guarded && self.environment.is_protected(name) {
            return Err(StartError::Protected {
                name: name.to_owned(),
            });
        }
        Ok((self.environment.lookup)(name))
    }

    fn expand(&self, what: &str, value: &str) -> Result<String, StartError> {
        if self.literal {
            return Ok(value.to_owned());
        }
        let refused = std::cell::RefCell::new(None);
        let expanded = expand(value, &|name| match self.variable(name) {
            Ok(found) => found,
            Err(error) => {
                refused.borrow_mut().get_or_insert(error);
                None
            }
        });
        if let Some(error) = refused.into_inner() {
            return Err(StartError::Refused {
                field: what.to_owned(),
                source: Box::new(error),
            });
        }
        expanded.map_err(|source| StartError::Expand {
            field: what.to_owned(),
            source,
        })
    }
}

/// A started transport.
// Made once per server start and taken apart at once: the size of a variant does not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Started {
    Stdio {
        child: Child,
        stdout: ChildStdout,
        stdin: ChildStdin,
        stderr: StderrTail,
    },
    /// The transport is made by the caller: with a stored sign-in it takes async set-up.
    Http(HttpStart),
}

/// What a Streamable HTTP connection is made of.
pub(crate) struct HttpStart {
    pub(crate) client: reqwest::Client,
    pub(crate) config: StreamableHttpClientTransportConfig,
    /// The stored sign-in to use, when the server has one and may use it.
    pub(crate) sign_in: Option<SignIn>,
    /// What a 401 means for this server: how to sign in, or why corvid cannot.
    pub(crate) on_unauthorized: Unauthorized,
}

/// What a server's 401 means.
#[derive(Debug, Clone)]
pub(crate) enum Unauthorized {
    /// `corvid mcp login` can sign in to it.
    SignIn,
    /// It cannot: the reason, said as the failure.
    Failed(String),
}

/// An HTTP server's URL and headers with their variables resolved.
pub(crate) struct HttpParts {
    pub(crate) url: String,
    pub(crate) headers: HashMap<HeaderName, HeaderValue>,
    /// `bearer_token_env_var`'s value.
    pub(crate) bearer: Option<String>,
}

impl HttpParts {
    /// Whether the configuration already sends credentials of its own (then corvid never
    /// adds a sign-in of its own to them).
    pub(crate) fn has_own_credentials(&self) -> bool {
        self.bearer.is_some() || self.headers.contains_key(&http::header::AUTHORIZATION)
    }
}

/// The URL and headers of an HTTP server, with `${VAR}` references resolved as for a start.
pub(crate) fn http_parts(
    server: &McpServer,
    environment: &McpEnvironment,
) -> Result<HttpParts, StartError> {
    let McpTransport::Http {
        url,
        headers,
        env_headers,
        bearer_token_env_var,
    } = &server.transport
    else {
        return Err(StartError::NotHttp {
            name: server.name.clone(),
        });
    };
    let variables = environment.reader(server);
    let url = variables.expand("url", url)?;
    let mut custom = HashMap::new();
    let mut add = |name: &str, value: String| -> Result<(), StartError> {
        let header =
            HeaderName::from_bytes(name.as_bytes()).map_err(|_| StartError::HeaderName {
                name: name.to_owned(),
            })?;
        let mut value = HeaderValue::from_str(&value).map_err(|_| StartError::HeaderValue {
            name: name.to_owned(),
        })?;
        value.set_sensitive(true);
        custom.insert(header, value);
        Ok(())
    };
    for (name, value) in headers {
        add(name, variables.expand(&format!("headers.{name}"), value)?)?;
    }
    for (name, variable) in env_headers {
        if let Some(value) = variables.variable(variable)? {
            add(name, value)?;
        }
    }
    let bearer = match bearer_token_env_var {
        Some(variable) => Some(
            variables
                .variable(variable)?
                .ok_or_else(|| StartError::Unset {
                    field: "bearer_token_env_var",
                    variable: variable.clone(),
                })?,
        ),
        None => None,
    };
    Ok(HttpParts {
        url,
        headers: custom,
        bearer,
    })
}

/// Starts what `server` says, without speaking MCP yet.
pub(crate) fn start(
    server: &McpServer,
    environment: &McpEnvironment,
) -> Result<Started, StartError> {
    let variables = environment.reader(server);
    match &server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        } => {
            let program = variables.expand("command", command)?;
            let arguments: Vec<OsString> = args
                .iter()
                .map(|arg| variables.expand("args", arg).map(OsString::from))
                .collect::<Result<_, _>>()?;
            let widening = Widening {
                network: server.sandbox.network,
                write_outside: server.sandbox.write_outside,
            };
            let mut builder =
                environment
                    .sandbox
                    .command(&environment.project, &program, &arguments, widening);
            for (name, _) in std::env::vars_os() {
                if is_secret_variable(&name) {
                    builder.env_remove(name);
                }
            }
            for (name, value) in env {
                builder.env(name, variables.expand(&format!("env.{name}"), value)?);
            }
            for name in env_vars {
                if let Some(value) = variables.variable(name)? {
                    builder.env(name, value);
                }
            }
            if let Some(cwd) = cwd {
                let cwd = variables.expand("cwd", &cwd.display().to_string())?;
                builder.current_dir(environment.project.join(cwd));
            }
            builder
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = builder.spawn().map_err(|source| StartError::Spawn {
                program: program.clone(),
                source,
            })?;
            let (Some(stdout), Some(stdin), Some(stderr)) =
                (child.stdout.take(), child.stdin.take(), child.stderr.take())
            else {
                return Err(StartError::NoPipes);
            };
            let tail = StderrTail::default();
            tail.follow(stderr);
            Ok(Started::Stdio {
                child,
                stdout,
                stdin,
                stderr: tail,
            })
        }
        McpTransport::Http { .. } => {
            let parts = http_parts(server, environment)?;
            let on_unauthorized = unauthorized(server, &parts, environment);
            let sign_in = match (&on_unauthorized, &environment.oauth) {
                (Unauthorized::SignIn, Some(store)) => {
                    store.sign_in_for(server, &environment.project, &parts.url)?
                }
                _ => None,
            };
            let mut config = StreamableHttpClientTransportConfig::with_uri(parts.url.clone());
            if let Some(token) = parts.bearer {
                config = config.auth_header(token);
            }
            config = config.custom_headers(parts.headers);
            let client = reqwest::Client::builder()
                .build()
                .map_err(StartError::HttpClient)?;
            Ok(Started::Http(HttpStart {
                client,
                config,
                sign_in,
                on_unauthorized,
            }))
        }
    }
}

/// What a 401 from `server` means: it can sign in unless `oauth = false`, its configuration
/// sends credentials of its own, or an editor passed it.
/// The stamp of `server`'s stored sign-in (see `OAuthStore::stamp`), for an HTTP server corvid
/// signs in to; `None` otherwise. Reads the env file (and perhaps the keyring): call it off
/// the async runtime's threads.
pub(crate) fn sign_in_stamp(server: &McpServer, environment: &McpEnvironment) -> Option<String> {
    let store = environment.oauth.as_ref()?;
    let parts = http_parts(server, environment).ok()?;
    if !matches!(
        unauthorized(server, &parts, environment),
        Unauthorized::SignIn
    ) {
        return None;
    }
    store.stamp(server, &environment.project, &parts.url)
}

fn unauthorized(
    server: &McpServer,
    parts: &HttpParts,
    environment: &McpEnvironment,
) -> Unauthorized {
    if server.oauth.disabled {
        Unauthorized::Failed(
            "it asks for sign-in (HTTP 401), and its configuration says `oauth = false`; give it credentials with `headers` or `bearer_token_env_var`, or remove `oauth = false` and run `corvid mcp login`".to_owned(),
        )
    } else if parts.has_own_credentials() {
        Unauthorized::Failed(
            "it refused the credentials its configuration sends (HTTP 401): check the token in `bearer_token_env_var` or the Authorization header".to_owned(),
        )
    } else if server.origin.scope == McpScope::Editor {
        Unauthorized::Failed(
            "it asks for sign-in (HTTP 401); corvid signs in only to servers of its own configuration, so sign in where the editor defines this server, or define it in config.toml".to_owned(),
        )
    } else if environment.oauth.is_none() {
        Unauthorized::Failed("it asks for sign-in (HTTP 401)".to_owned())
    } else {
        Unauthorized::SignIn
    }
}

/// The last [`StderrTail::KEEP`] bytes a child wrote to its standard error.
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail {
    bytes: Arc<Mutex<VecDeque<u8>>>,
}

impl StderrTail {
    const KEEP: usize = 4096;

    /// Reads `stderr` until it closes, keeping the tail.
    fn follow(&self, mut stderr: tokio::process::ChildStderr) {
        let bytes = Arc::clone(&self.bytes);
        tokio::spawn(async move {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = stderr.read(&mut buffer).await {
                if read == 0 {
                    break;
                }
                let mut kept = bytes.lock();
                kept.extend(&buffer[..read]);
                let excess = kept.len().saturating_sub(Self::KEEP);
                kept.drain(..excess);
            }
        });
    }

    /// The tail as text, trimmed; empty when the child wrote nothing.
    pub(crate) fn text(&self) -> String {
        let kept: Vec<u8> = self.bytes.lock().iter().copied().collect();
        String::from_utf8_lossy(&kept).trim().to_owned()
    }
}

#[cfg(test)]
mod tests;
