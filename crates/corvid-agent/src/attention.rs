//! What a session service tells the program hosting it when someone should look: an approval
//! waits, or a turn ended. The host (corvid-desktop) shows a system notification for it when
//! no face is looking — which the faces report here: each attached face (a page tab) holds a
//! [`FaceFocus`] and says whether the user sees it now (the page: its tab visible and its
//! window focused). A face that goes away takes its report with it, so a closed tab never
//! counts as looking.
//!
//! One feed may serve several services in turn (a live settings reload builds a new service):
//! the host subscribes once.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use tokio::sync::broadcast;

/// Notices kept for a host that is slow to read; past them the oldest are dropped.
const NOTICES_BUFFERED: usize = 64;

/// Why a session wants attention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttentionKind {
    /// A proposal waits for an answer; `detail` is its one line (`Write notes.txt`).
    ApprovalWaiting,
    /// A turn of the user's ended; `detail` says how (`completed`, `failed`, …).
    TurnEnded,
}

/// One moment a session wants attention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attention {
    pub kind: AttentionKind,
    /// The session (`a1`, …).
    pub session_id: String,
    /// The conversation it holds.
    pub conversation_id: String,
    /// The conversation's title (empty before it has one).
    pub title: String,
    /// The proposal's line, or the turn's outcome.
    pub detail: String,
    /// Whether an attached face reported that the user looks at it when this happened.
    pub seen: bool,
}

/// The feed: notices out, focus reports in. Cheap to share (`Arc`).
#[derive(Debug)]
pub struct AttentionFeed {
    notices: broadcast::Sender<Attention>,
    /// Each attached face's last report: focused or not.
    faces: Mutex<HashMap<u64, bool>>,
    next_face: AtomicU64,
}

impl Default for AttentionFeed {
    fn default() -> Self {
        Self {
            notices: broadcast::channel(NOTICES_BUFFERED).0,
            faces: Mutex::default(),
            next_face: AtomicU64::new(0),
        }
    }
}

impl AttentionFeed {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Every notice from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Attention> {
        self.notices.subscribe()
    }

    /// A face attaches; it counts as not looking until it reports otherwise.
    pub fn face(self: &Arc<Self>) -> FaceFocus {
        let id = self.next_face.fetch_add(1, Ordering::Relaxed);
        self.faces.lock().insert(id, false);
        FaceFocus {
            feed: Arc::clone(self),
            id,
        }
    }

    /// Whether any attached face reports that the user looks at it.
    pub fn seen(&self) -> bool {
        self.faces.lock().values().any(|focused| *focused)
    }

    pub(crate) fn publish(
        &self,
        kind: AttentionKind,
        session_id: &str,
        conversation_id: String,
        title: String,
        detail: String,
    ) {
        let notice = Attention {
            kind,
            session_id: session_id.to_owned(),
            conversation_id,
            title,
            detail,
            seen: self.seen(),
        };
        // Nobody subscribed is not an error: most hosts (the terminal) do not.
        let _ = self.notices.send(notice);
    }
}

/// One attached face's focus report; dropped when the face goes away.
#[derive(Debug)]
pub struct FaceFocus {
    feed: Arc<AttentionFeed>,
    id: u64,
}

impl FaceFocus {
    /// The user looks at this face now (`true`) or not.
    pub fn set(&self, focused: bool) {
        self.feed.faces.lock().insert(self.id, focused);
    }
}

impl Drop for FaceFocus {
    fn drop(&mut self) {
        self.feed.faces.lock().remove(&self.id);
    }
}

/// A session's side of the feed: its id, for the notices its journal publishes.
#[derive(Debug, Clone)]
pub(crate) struct Attending {
    pub(crate) feed: Arc<AttentionFeed>,
    pub(crate) session_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_is_seen_only_while_an_attached_face_reports_focus() {
        let feed = AttentionFeed::new();
        let mut notices = feed.subscribe();
        let publish = |detail: &str| {
            feed.publish(
                AttentionKind::TurnEnded,
                "a1",
                "c1".to_owned(),
                "Title".to_owned(),
                detail.to_owned(),
            );
        };
        publish("no face");
        assert!(!notices.try_recv().unwrap().seen);
        let tab = feed.face();
        let other = feed.face();
        publish("faces, none focused");
        assert!(!notices.try_recv().unwrap().seen);
        tab.set(true);
        publish("one focused");
        let notice = notices.try_recv().unwrap();
        assert!(notice.seen);
        assert_eq!(notice.detail, "one focused");
        drop(tab);
        publish("the focused one closed");
        assert!(!notices.try_recv().unwrap().seen);
        other.set(false);
        assert!(!feed.seen());
    }
}
