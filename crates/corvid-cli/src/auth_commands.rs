//! `corvid login xai`, `corvid logout`, `corvid status`: the account commands. Interactive
//! messages go to stderr; `status` returns its text for stdout. Nothing here prints a secret.

use anyhow::Context;
use corvid_auth::{
    ACCESS_TOKEN_VAR, AuthStatus, BrowserLogin, CredentialStore, DeviceCode, OAuthEndpoints,
    REFRESH_TOKEN_VAR, TokenSet, describe_duration, login_browser, login_device, oauth_http_client,
    open_in_browser, persist_login, sign_out,
};
use corvid_config::{AuthMode, Loaded};

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
             sign-in, set auth_mode = \"oauth\" in {} (or CORVID_AUTH_MODE=oauth in the \
             environment), then restart `corvid serve`.",
            loaded.paths.config_file.display()
        ),
        AuthMode::OAuth => {
            eprintln!("If `corvid serve` is running, restart it to use this sign-in.");
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
