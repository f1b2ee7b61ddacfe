//! Platforms without a notification service corvid knows: none are shown (said once).

use tokio::sync::mpsc;

use super::Notice;
use crate::view::Action;

pub(super) struct Notifier;

impl Notifier {
    pub(super) async fn connect(_open: mpsc::UnboundedSender<Action>) -> Option<Self> {
        tracing::info!("system notifications are not available on this platform");
        None
    }

    pub(super) async fn show(&mut self, _notice: &Notice) {}
}
