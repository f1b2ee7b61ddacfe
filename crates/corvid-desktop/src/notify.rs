//! System notifications: when the page's agent waits for an approval or ends a turn and no tab
//! is looked at (see `corvid_cli::host::LiveSettings::attention`: each tab reports whether its page is
//! visible and its window focused), the desktop shows a notification; clicking it opens the
//! chat. The terminal (`corvid chat`) runs an agent of its own and rings its own bell (OSC 9),
//! so only the page's tabs count as faces here.
//!
//! Linux: `org.freedesktop.Notifications` on the session bus. macOS: Notification Center
//! through `osascript` (a click there does not open the chat). Elsewhere: none.

#[cfg(target_os = "linux")]
#[path = "notify/linux.rs"]
mod platform;
#[cfg(target_os = "macos")]
#[path = "notify/macos.rs"]
mod platform;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
#[path = "notify/none.rs"]
mod platform;

use corvid_cli::host::{Attention, AttentionKind};
use tokio::sync::{broadcast, mpsc};

use crate::view::Action;

/// What one notification says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Notice {
    pub(crate) summary: String,
    pub(crate) body: String,
}

/// The notification for `attention`, or none when a tab was looked at.
pub(crate) fn notice(attention: &Attention) -> Option<Notice> {
    if attention.seen {
        return None;
    }
    let conversation = if attention.title.trim().is_empty() {
        "a new conversation".to_owned()
    } else {
        attention.title.trim().to_owned()
    };
    Some(match attention.kind {
        AttentionKind::ApprovalWaiting => Notice {
            summary: "corvid: approval needed".to_owned(),
            body: format!("{} — in {conversation}", attention.detail),
        },
        AttentionKind::TurnEnded => Notice {
            summary: match attention.detail.as_str() {
                "completed" => "corvid: turn finished".to_owned(),
                "" => "corvid: turn ended".to_owned(),
                outcome => format!("corvid: turn {}", outcome.replace('_', " ")),
            },
            body: conversation,
        },
    })
}

/// Shows a notification for each notice nobody looked at until the feed ends; a click sends
/// `Action::OpenChat` on `open`.
pub(crate) async fn run(
    mut attention: broadcast::Receiver<Attention>,
    open: mpsc::UnboundedSender<Action>,
) {
    let Some(mut notifier) = platform::Notifier::connect(open).await else {
        return;
    };
    loop {
        match attention.recv().await {
            Ok(attention) => {
                if let Some(notice) = notice(&attention) {
                    notifier.show(&notice).await;
                }
            }
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "notifications skipped: too many at once");
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attention(kind: AttentionKind, title: &str, detail: &str, seen: bool) -> Attention {
        Attention {
            kind,
            session_id: "a1".to_owned(),
            conversation_id: "c1".to_owned(),
            title: title.to_owned(),
            detail: detail.to_owned(),
            seen,
        }
    }

    #[test]
    fn a_notice_names_what_waits_and_where_and_none_is_shown_when_a_tab_is_looked_at() {
        assert_eq!(
            notice(&attention(
                AttentionKind::ApprovalWaiting,
                "Fix the build",
                "Write notes.txt",
                false
            )),
            Some(Notice {
                summary: "corvid: approval needed".to_owned(),
                body: "Write notes.txt — in Fix the build".to_owned(),
            })
        );
        assert_eq!(
            notice(&attention(AttentionKind::TurnEnded, "", "completed", false)),
            Some(Notice {
                summary: "corvid: turn finished".to_owned(),
                body: "a new conversation".to_owned(),
            })
        );
        assert_eq!(
            notice(&attention(
                AttentionKind::TurnEnded,
                "T",
                "step_limit",
                false
            ))
            .unwrap()
            .summary,
            "corvid: turn step limit"
        );
        assert_eq!(
            notice(&attention(AttentionKind::TurnEnded, "T", "completed", true)),
            None
        );
    }
}
