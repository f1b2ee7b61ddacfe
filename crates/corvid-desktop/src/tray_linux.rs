//! The Linux tray: a StatusNotifierItem with its dbusmenu, exported on the session D-Bus by
//! `ksni` (pure D-Bus: no GTK, no X server). Any desktop with a StatusNotifierWatcher shows it
//! (KDE, GNOME with the AppIndicator extension, most panels); with none, or no session bus at
//! all, the app keeps serving and says so in the log.

use ksni::TrayMethods;
use ksni::menu::{CheckmarkItem, MenuItem, StandardItem};
use tokio::sync::mpsc;

use crate::app::{Launch, Tray};
use crate::view::{Action, Entry, Level, TrayView};

/// What ksni exports: the view last drawn and where picked actions go.
struct Item {
    view: TrayView,
    actions: mpsc::UnboundedSender<Action>,
}

impl ksni::Tray for Item {
    fn id(&self) -> String {
        "corvid".to_owned()
    }

    fn title(&self) -> String {
        self.view.title.clone()
    }

    fn status(&self) -> ksni::Status {
        match self.view.level {
            Level::Ok => ksni::Status::Active,
            Level::Warning | Level::Down => ksni::Status::NeedsAttention,
        }
    }

    fn icon_name(&self) -> String {
        self.view.icon_name.to_owned()
    }

    fn icon_pixmap(&self) -> Vec<ksni::Icon> {
        let side = i32::try_from(crate::icon::SIZE).unwrap_or(i32::MAX);
        vec![ksni::Icon {
            width: side,
            height: side,
            data: crate::icon::argb(self.view.level),
        }]
    }

    fn tool_tip(&self) -> ksni::ToolTip {
        ksni::ToolTip {
            title: self.view.title.clone(),
            description: self.view.tooltip.clone(),
            ..Default::default()
        }
    }

    /// A left click opens the chat.
    fn activate(&mut self, _x: i32, _y: i32) {
        let _ = self.actions.send(Action::OpenChat);
    }

    fn menu(&self) -> Vec<MenuItem<Self>> {
        self.view.entries.iter().map(menu_item).collect()
    }

    fn watcher_offline(&self, reason: ksni::OfflineReason) -> bool {
        tracing::warn!(
            ?reason,
            "no tray host on the session bus: the tray shows again when one appears"
        );
        // Keep the item: a panel that starts later finds it.
        true
    }
}

fn menu_item(entry: &Entry) -> MenuItem<Item> {
    match entry {
        Entry::Info(text) => StandardItem {
            label: text.clone(),
            enabled: false,
            ..Default::default()
        }
        .into(),
        Entry::Separator => MenuItem::Separator,
        Entry::Item {
            action,
            label,
            enabled,
            checked: None,
        } => {
            let action = *action;
            StandardItem {
                label: label.clone(),
                enabled: *enabled,
                activate: Box::new(move |item: &mut Item| {
                    let _ = item.actions.send(action);
                }),
                ..Default::default()
            }
            .into()
        }
        Entry::Item {
            action,
            label,
            enabled,
            checked: Some(checked),
        } => {
            let action = *action;
            CheckmarkItem {
                label: label.clone(),
                enabled: *enabled,
                checked: *checked,
                activate: Box::new(move |item: &mut Item| {
                    let _ = item.actions.send(action);
                }),
                ..Default::default()
            }
            .into()
        }
    }
}

/// The item on the bus, or nothing when there is no session bus to put it on.
struct LinuxTray(Option<ksni::Handle<Item>>);

impl Tray for LinuxTray {
    async fn show(&mut self, view: &TrayView) {
        if let Some(handle) = &self.0 {
            let view = view.clone();
            handle.update(move |item| item.view = view).await;
        }
    }

    async fn close(self) {
        if let Some(handle) = self.0 {
            handle.shutdown().await;
        }
    }
}

/// Runs the app with its tray on the session bus, on `runtime`, from the main thread.
pub(crate) fn run(runtime: &tokio::runtime::Runtime, launch: Launch) -> anyhow::Result<()> {
    runtime.block_on(async move {
        let (actions, picked) = mpsc::unbounded_channel();
        let item = Item {
            view: crate::view::Health::starting().view(),
            actions,
        };
        // Wait for a watcher that is not there yet (a panel starting after us) rather than fail.
        let handle = match item.assume_sni_available(true).spawn().await {
            Ok(handle) => Some(handle),
            Err(error) => {
                tracing::warn!(%error, "no tray: corvid keeps serving; stop it with Ctrl-C or SIGTERM");
                None
            }
        };
        crate::app::run(launch, LinuxTray(handle), picked).await
    })
}
