//! What the tray shows, from what the app knows: the gateway's health and each provider's
//! failure, mapped to a title, a status, an icon, a tooltip and the menu. Pure, so the mapping
//! is tested without a desktop; each platform's tray only draws a [`TrayView`].

use std::net::SocketAddr;

/// A menu entry the user can pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Action {
    OpenChat,
    Settings,
    SignInXai,
    SignInZed,
    CopyZedSettings,
    StartAtLogin,
    Quit,
}

/// A provider whose last call failed with none succeeding since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failing {
    pub(crate) provider: String,
    /// The failure in a few words (`502 bad gateway`, `connect: …`), never a secret.
    pub(crate) reason: String,
}

/// What the app knows about itself at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Health {
    /// Where the gateway listens; `None` before it is bound.
    pub(crate) address: Option<SocketAddr>,
    /// `/healthz` answered on that address at the last look.
    pub(crate) gateway_up: bool,
    pub(crate) failing: Vec<Failing>,
    /// The page is served (it needs the store and the agent); the chat and settings need it.
    pub(crate) page: bool,
    /// A start-at-login entry exists for this program.
    pub(crate) starts_at_login: bool,
    /// The last thing a menu action reported (a sign-in finished, a copy failed …).
    pub(crate) note: Option<String>,
    /// Quit was picked: the gateway is finishing its streams.
    pub(crate) stopping: bool,
}

/// How urgent the tray looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Ok,
    /// Serving, but a provider fails.
    Warning,
    /// The gateway does not answer (or is stopping).
    Down,
}

/// One line of the menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A line of text that cannot be picked (the status).
    Info(String),
    Separator,
    Item {
        action: Action,
        label: String,
        enabled: bool,
        /// `Some` for a checkmark item.
        checked: Option<bool>,
    },
}

/// Everything a tray draws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrayView {
    pub(crate) level: Level,
    pub(crate) title: String,
    pub(crate) tooltip: String,
    /// A freedesktop icon-theme name (Linux hosts that draw themed icons).
    pub(crate) icon_name: &'static str,
    pub(crate) entries: Vec<Entry>,
}

impl Health {
    /// Before the gateway is bound.
    pub(crate) fn starting() -> Self {
        Self {
            address: None,
            gateway_up: false,
            failing: Vec::new(),
            page: false,
            starts_at_login: false,
            note: None,
            stopping: false,
        }
    }

    pub(crate) fn level(&self) -> Level {
        if self.stopping || !self.gateway_up {
            Level::Down
        } else if self.failing.is_empty() {
            Level::Ok
        } else {
            Level::Warning
        }
    }

    /// The status line at the top of the menu.
    pub(crate) fn status_line(&self) -> String {
        match (self.stopping, self.gateway_up, self.address) {
            (true, _, _) => "Gateway: stopping".to_owned(),
            (false, _, None) => "Gateway: starting".to_owned(),
            (false, false, Some(address)) => format!("Gateway: down (not answering on {address})"),
            (false, true, Some(address)) if self.failing.is_empty() => {
                format!("Gateway: running on {address}")
            }
            (false, true, Some(address)) => format!(
                "Gateway: running on {address}; {} failing",
                self.failing_names()
            ),
        }
    }

    pub(crate) fn view(&self) -> TrayView {
        let level = self.level();
        let title = match level {
            Level::Ok => "corvid".to_owned(),
            Level::Warning => format!("corvid: {} failing", self.failing_names()),
            Level::Down if self.stopping => "corvid: stopping".to_owned(),
            Level::Down if self.address.is_none() => "corvid: starting".to_owned(),
            Level::Down => "corvid: gateway down".to_owned(),
        };
        let mut entries = vec![Entry::Info(self.status_line())];
        entries.extend(
            self.failing
                .iter()
                .map(|failing| Entry::Info(format!("{}: {}", failing.provider, failing.reason))),
        );
        if let Some(note) = &self.note {
            entries.push(Entry::Info(note.clone()));
        }
        entries.push(Entry::Separator);
        let item = |action: Action, label: &str, enabled: bool| Entry::Item {
            action,
            label: label.to_owned(),
            enabled,
            checked: None,
        };
        let live = !self.stopping;
        entries.extend([
            item(Action::OpenChat, "Open chat", live && self.page),
            item(Action::Settings, "Settings…", live && self.page),
            Entry::Separator,
            item(Action::SignInXai, "Sign in to xAI (SuperGrok)…", live),
            item(Action::SignInZed, "Sign in to Zed…", live),
            item(Action::CopyZedSettings, "Copy Zed settings", true),
            Entry::Item {
                action: Action::StartAtLogin,
                label: "Start at login".to_owned(),
                enabled: true,
                checked: Some(self.starts_at_login),
            },
            Entry::Separator,
            item(Action::Quit, "Quit", live),
        ]);
        let tooltip = std::iter::once(self.status_line())
            .chain(
                self.failing
                    .iter()
                    .map(|failing| format!("{}: {}", failing.provider, failing.reason)),
            )
            .collect::<Vec<_>>()
            .join("\n");
        TrayView {
            level,
            title,
            tooltip,
            icon_name: match level {
                Level::Ok => "network-server",
                Level::Warning => "dialog-warning",
                Level::Down => "network-offline",
            },
            entries,
        }
    }

    fn failing_names(&self) -> String {
        self.failing
            .iter()
            .map(|failing| failing.provider.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests;
