//! `corvid login xai`, `corvid logout`, `corvid status`: the account commands. Interactive
//! messages go to stderr; `status` returns its text for stdout. Nothing here prints a secret.

use anyhow::Context;
use corvid_auth::{
    ACCESS_TOKEN_VAR, AuthStatus, BrowserLogin, CredentialStore, DeviceCode, OAuthEndpoints,
    REFRESH_TOKEN_VAR, TokenSet, describe_duration, login_browser, login_device, oauth_http_client,
    open_in_browser, persist_login, sign_out,
};
use corvid_config::{AuthMode, CredentialSource, Loaded};

/// Signs in to xAI (browser flow, or the device flow with `device`) and stores the tokens in
/// the env file (plus the keyring where one works). Never changes `auth_mode`.
pub(crate) async fn login_xai(loaded: &Loaded, device: bool) -> anyhow::Result<()> {
    let endpoints = OAuthEndpoints::from_config(&loaded.config);
    let http = oauth_http_client()?;
    let tokens = if device {
        login_device(&endpoints, &http, show_device_code)
            .await
            .context("xAI sign-in failed")?
    } else {
        let options = BrowserLogin::new(endpoints, http, |url: &str| {
            eprintln!("Sign in to xAI in your browser:\n\n  {url}\n");
            if open_in_browser(url) {
                eprintln!("(opened your browser; waiting for it to come back to corvid...)");
            } else {
                eprintln!(
                    "No browser could be opened here: open the URL above in a browser on this \
                     machine. Over SSH or on a headless machine, use `corvid login xai --device`."
                );
            }
        });
        login_browser(options).await.context("xAI sign-in failed")?
    };
    let store = CredentialStore::detect(loaded);
    persist_login(&store, &tokens).context("signed in, but the tokens could not be stored")?;
    report_login(loaded, &store, &tokens);
    Ok(())
}

fn show_device_code(code: &DeviceCode) {
    eprintln!("To sign in to xAI, open:\n\n  {}\n", code.verification_uri);
    eprintln!("and enter the code:  {}\n", code.user_code);
    if let Some(complete) = &code.verification_uri_complete {
        eprintln!("(or open {complete} to have the code filled in)");
    }
    eprintln!(
        "Waiting for approval; the code expires in {}.",
        describe_duration(i64::try_from(code.expires_in).unwrap_or(i64::MAX))
    );
}

fn report_login(loaded: &Loaded, store: &CredentialStore, tokens: &TokenSet) {
    match &tokens.email {
        Some(email) => eprintln!("Signed in as {email}."),
        None => eprintln!("Signed in to xAI."),
    }
    let keyring = match store.backend() {
        "env file only" => String::new(),
        backend => format!(", with a copy in the {backend}"),
    };
    eprintln!("Tokens stored in {}{keyring}.", store.env_file().display());
    for name in shadowed_by_environment(loaded) {
        eprintln!(
            "warning: {name} is also set in the environment and overrides the stored sign-in; \
             unset it."
        );
    }
    match loaded.config.auth_mode {
        AuthMode::ApiKey => eprintln!(
            "note: auth_mode is \"api_key\", so corvid keeps using XAI_API_KEY. To use this \
             sign-in, set auth_mode = \"oauth\" in {} (or on the page's Settings tab; a running \
             `corvid serve` follows the change).",
            loaded.paths.config_file.display()
        ),
        AuthMode::OAuth => {
            eprintln!("A running `corvid serve` uses this sign-in from its next request.");
        }
    }
}

/// Removes the xAI sign-in from the env file and the keyring, saying what was removed.
pub(crate) fn logout(loaded: &Loaded) -> anyhow::Result<()> {
    let store = CredentialStore::detect(loaded);
    let removed = sign_out(&store).context("could not remove the xAI sign-in")?;
    let env_file = store.env_file().display();
    if removed.is_empty() {
        eprintln!("No xAI sign-in was stored in {env_file}.");
    } else {
        eprintln!("Removed {} from {env_file}.", removed.join(", "));
    }
    match store.backend() {
        "env file only" => {}
        backend => eprintln!("Cleared the copy in the {backend}."),
    }
    for name in shadowed_by_environment(loaded) {
        eprintln!("note: {name} is still set in the environment; unset it to sign out completely.");
    }
    if loaded.config.auth_mode == AuthMode::OAuth {
        eprintln!(
            "auth_mode is \"oauth\": until you run `corvid login xai` again, requests get 401."
        );
    }
    Ok(())
}

/// The auth part of `corvid status`: mode, who is signed in, expiry, where secrets live.
pub(crate) fn status(loaded: &Loaded) -> anyhow::Result<String> {
    let mut text = AuthStatus::from_loaded(loaded).render_now();
    for name in shadowed_by_environment(loaded) {
        text.push_str(&format!(
            "note:          {name} comes from the environment, not the env file\n"
        ));
    }
    Ok(text)
}

/// OAuth variables whose value comes from the process environment (which beats the env file).
fn shadowed_by_environment(loaded: &Loaded) -> Vec<&'static str> {
    [ACCESS_TOKEN_VAR, REFRESH_TOKEN_VAR]
        .into_iter()
        .filter(|name| {
            loaded.secret(name).is_some_and(|value| {
                loaded.env_file.get(name).map(str::trim) != Some(value.as_str())
            })
        })
        .collect()
}

/// The gateway and API-key lines of `corvid status`: whether a gateway answers `/healthz` on
/// the configured address, and for each provider that takes a key (OpenAI, Anthropic,
/// Gemini, and any declared one) whether it is present — never the value.
pub(crate) fn gateway_and_keys(loaded: &Loaded) -> String {
    let config = &loaded.config;
    let probe_host = match config.host.trim_start_matches('[').trim_end_matches(']') {
        // A wildcard bind answers on loopback too.
        "0.0.0.0" | "" => "127.0.0.1".to_owned(),
        "::" => "::1".to_owned(),
        host => host.to_owned(),
    };
    let base = config.local_base_url();
    let mut lines = vec![match probe_health(&probe_host, config.port) {
        Some(200) => format!("gateway:       running at {base} (/healthz answered 200)"),
        Some(status) => format!(
            "gateway:       something answers at {base}, but /healthz said {status} (another program on port {}?)",
            config.port
        ),
        None => format!("gateway:       not running at {base} (start it with `corvid serve`)"),
    }];
    for provider in &config.providers {
        let CredentialSource::Env(variables) = &provider.credential else {
            continue;
        };
        let found = variables.iter().find(|name| loaded.secret(name).is_some());
        let state = match found {
            Some(name) => {
                let from =
                    if loaded.env_file.get(name).map(str::trim) == loaded.secret(name).as_deref() {
                        "env file"
                    } else {
                        "environment"
                    };
                format!("present ({name}, from the {from})")
            }
            None => format!("missing (set {})", variables.join(" or ")),
        };
        let label = format!("{} key:", provider.name);
        lines.push(format!("{label:<15}{state}"));
    }
    lines.join("\n")
}

/// A line for each provider that needs no key (a local OpenAI-compatible server, declared in
/// config.toml): `corvid status` lists it with its address.
pub(crate) fn local_providers(registry: &corvid_providers::Registry) -> Vec<String> {
    registry
        .providers()
        .iter()
        .filter(|provider| {
            provider.is_available()
                && matches!(provider.config().credential, CredentialSource::None)
        })
        .map(|provider| {
            let label = format!("{}:", provider.name());
            format!(
                "{label:<15}local, no key needed ({})",
                provider.config().base_url
            )
        })
        .collect()
}

/// The status of `GET /healthz` at `host:port`, or `None` when nothing answers within a
/// second. Plain HTTP/1.1 over a blocking socket: `status` needs no HTTP client.
pub(crate) fn probe_health(host: &str, port: u16) -> Option<u16> {
    use std::io::{Read, Write};
    use std::net::{TcpStream, ToSocketAddrs};
    use std::time::Duration;
    let timeout = Duration::from_secs(1);
    let address = (host, port).to_socket_addrs().ok()?.next()?;
    let mut stream = TcpStream::connect_timeout(&address, timeout).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    // The gateway accepts only loopback Host names.
    let host_header = if address.is_ipv6() {
        format!("[::1]:{port}")
    } else {
        format!("127.0.0.1:{port}")
    };
    let request =
        format!("GET /healthz HTTP/1.1\r\nHost: {host_header}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 64];
    let read = stream.read(&mut head).ok()?;
    // "HTTP/1.1 200 OK"
    std::str::from_utf8(&head[..read])
        .ok()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
