//! Notifications on macOS: Notification Center through `osascript -e 'display notification'`
//! (no framework bindings to build). Such a notification belongs to Script Editor: a click on
//! it does not open corvid's chat. Written for macOS, not run here (see the crate's README).

use tokio::sync::mpsc;

use super::Notice;
use crate::view::Action;

pub(super) struct Notifier;

impl Notifier {
    pub(super) async fn connect(_open: mpsc::UnboundedSender<Action>) -> Option<Self> {
        Some(Self)
    }

    pub(super) async fn show(&mut self, notice: &Notice) {
        let script = format!(
            "display notification {} with title {}",
            quoted(&notice.body),
            quoted(&notice.summary)
        );
        let shown = tokio::process::Command::new("osascript")
            .args(["-e", &script])
            .status()
            .await;
        if let Err(error) = shown {
            tracing::warn!(%error, "cannot show a notification through osascript");
        }
    }
}

/// An AppleScript string literal.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}
