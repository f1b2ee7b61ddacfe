//! `corvid login zed`, `corvid logout zed`, and the Zed lines of `corvid status`.

use std::time::Duration;

use anyhow::Context;
use corvid_auth::zed::{ZedLogin, ZedStore, login_zed, zed_credentials_from_loaded};
use corvid_config::Loaded;
use corvid_providers::zed::{ZedClient, ZedConfig, ZedError};

const NOTICE: &str = "corvid will use your Zed account's hosted models for you, on this machine only.\n\
Zed's terms apply: the access is yours alone — do not share it, resell it, or expose corvid beyond\n\
loopback (corvid turns the Zed provider off when CORVID_ALLOW_REMOTE is set).";

pub(crate) async fn login(loaded: &Loaded) -> anyhow::Result<()> {
    let hosts = corvid_providers::zed_hosts(&loaded.config);
    let store = ZedStore::detect(loaded);
    let system_id = store.system_id()?;
    eprintln!("{NOTICE}\n");
    let mut options = ZedLogin::new(hosts.clone(), |url| {
        eprintln!("Open this page to sign in to Zed:\n\n  {url}\n");
        if corvid_auth::open_in_browser(url) {
            eprintln!("(opened in your browser; waiting for it to come back)");
        }
    });
    options.system_id = Some(system_id);
    let credentials = login_zed(options).await?;
    store.save(&credentials)?;
    let client = ZedClient::new(ZedConfig::new(&hosts), credentials).context("cannot reach Zed")?;
    match tokio::time::timeout(Duration::from_secs(20), client.me()).await {
        Ok(Ok(account)) => eprintln!("Signed in to Zed: {}.", account.summary()),
        Ok(Err(error)) => eprintln!(
            "Signed in, but the account could not be read: {}",
            corvid_providers::error_chain(&error)
        ),
        Err(_) => eprintln!("Signed in; Zed did not answer the account check in time."),
    }
    eprintln!("Zed models are now addressed as zed/<model>; `corvid models` lists them.");
    Ok(())
}

pub(crate) fn logout(loaded: &Loaded) -> anyhow::Result<()> {
    let removed = ZedStore::detect(loaded).clear()?;
    if removed.is_empty() {
        eprintln!("No Zed sign-in was stored.");
    } else {
        eprintln!("Signed out of Zed (removed {}).", removed.join(", "));
    }
    Ok(())
}

/// The Zed lines of `corvid status`: who is signed in, the organization and plan (asked of
/// Zed), never a token.
pub(crate) async fn status(loaded: &Loaded) -> String {
    let store = ZedStore::detect(loaded);
    let Some((credentials, _)) = zed_credentials_from_loaded(loaded, &store) else {
        return "zed: not signed in (`corvid login zed`)".to_owned();
    };
    let user = credentials.user_id.clone();
    let hosts = corvid_providers::zed_hosts(&loaded.config);
    let account = match ZedClient::new(ZedConfig::new(&hosts), credentials) {
        // Zed refusing the sign-in removes it from the store (issue 10, item 21).
        Ok(client) => match tokio::time::timeout(
            Duration::from_secs(10),
            client.with_store(store.clone()).me(),
        )
        .await
        {
            Ok(Ok(account)) => account.summary(),
            Ok(Err(ZedError::SignedOut)) => {
                return "zed: not signed in: Zed refused the stored sign-in (401), so corvid \
                        removed it; run `corvid login zed`"
                    .to_owned();
            }
            Ok(Err(error)) => format!("user {user} ({})", corvid_providers::error_chain(&error)),
            Err(_) => format!("user {user} (Zed did not answer in time)"),
        },
        Err(error) => format!("user {user} ({error})"),
    };
    format!(
        "zed: signed in as {account}; credentials in the {}",
        store.backend()
    )
}
