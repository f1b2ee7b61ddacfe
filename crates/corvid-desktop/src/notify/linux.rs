//! Notifications on Linux: `Notify` on `org.freedesktop.Notifications` (the desktop's
//! notification server, over the session bus), each replacing the last one corvid showed; its
//! `ActionInvoked` signal with the `default` action (a click on the notification) opens the
//! chat.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt;
use parking_lot::Mutex;
use tokio::sync::mpsc;
use zbus::zvariant::Value;

use super::Notice;
use crate::view::Action;

#[zbus::proxy(
    interface = "org.freedesktop.Notifications",
    default_service = "org.freedesktop.Notifications",
    default_path = "/org/freedesktop/Notifications"
)]
trait Notifications {
    #[allow(clippy::too_many_arguments)] // the specification's signature
    fn notify(
        &self,
        app_name: &str,
        replaces_id: u32,
        app_icon: &str,
        summary: &str,
        body: &str,
        actions: &[&str],
        hints: HashMap<&str, Value<'_>>,
        expire_timeout: i32,
    ) -> zbus::Result<u32>;

    #[zbus(signal)]
    fn action_invoked(&self, id: u32, action_key: String) -> zbus::Result<()>;
}

pub(super) struct Notifier {
    proxy: NotificationsProxy<'static>,
    /// The id of the notification shown last (0: none), shared with the click listener.
    shown: Arc<Mutex<u32>>,
}

impl Notifier {
    /// On the session bus, listening for clicks; `None` (said once in the log) with no bus.
    pub(super) async fn connect(open: mpsc::UnboundedSender<Action>) -> Option<Self> {
        let connected = async {
            let bus = zbus::Connection::session().await?;
            let proxy = NotificationsProxy::new(&bus).await?;
            let clicks = proxy.receive_action_invoked().await?;
            Ok::<_, zbus::Error>((proxy, clicks))
        };
        let (proxy, mut clicks) = match connected.await {
            Ok(connected) => connected,
            Err(error) => {
                tracing::warn!(%error, "no system notifications: no session bus");
                return None;
            }
        };
        let shown = Arc::new(Mutex::new(0));
        let ours = Arc::clone(&shown);
        tokio::spawn(async move {
            while let Some(click) = clicks.next().await {
                let Ok(args) = click.args() else { continue };
                tracing::debug!(id = args.id, action = %args.action_key, "notification action");
                if args.action_key == "default" && args.id != 0 && args.id == *ours.lock() {
                    let _ = open.send(Action::OpenChat);
                }
            }
        });
        Some(Self { proxy, shown })
    }

    pub(super) async fn show(&mut self, notice: &Notice) {
        let replaces = *self.shown.lock();
        let sent = self
            .proxy
            .notify(
                "corvid",
                replaces,
                "dialog-information",
                &notice.summary,
                &notice.body,
                &["default", "Open chat"],
                HashMap::new(),
                -1,
            )
            .await;
        match sent {
            Ok(id) => *self.shown.lock() = id,
            Err(error) => {
                tracing::warn!(%error, "cannot show a notification (is a notification server running?)");
            }
        }
    }
}
