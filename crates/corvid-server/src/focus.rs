//! Whether the user looks at a tab, for the host's system notifications (see
//! `corvid_agent::AttentionFeed`): a tab names itself in its socket's query (`tab`, with
//! `focused` as it is when connecting) and reports changes with `POST /api/agent/focus`
//! (`{"tab": "...", "focused": true}`), "focused" meaning its page visible and its window
//! focused. A tab's report lives as long as its socket: a closed tab never counts as looking.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use corvid_agent::{AttentionFeed, FaceFocus};
use corvid_gateway::ApiError;
use parking_lot::Mutex;
use serde::Deserialize;

use crate::PageState;

/// The longest tab name taken (the page makes a UUID).
const MAX_TAB_CHARS: usize = 64;

/// Each connected tab's focus report, by the name the tab gave.
#[derive(Debug, Default)]
pub(crate) struct Tabs(Mutex<HashMap<String, Arc<FaceFocus>>>);

impl Tabs {
    /// A tab's socket opened: its report counts until the returned guard drops.
    pub(crate) fn attach(
        self: &Arc<Self>,
        tab: &str,
        focused: bool,
        feed: &Arc<AttentionFeed>,
    ) -> Attached {
        let face = Arc::new(feed.face());
        face.set(focused);
        self.0.lock().insert(tab.to_owned(), Arc::clone(&face));
        Attached {
            tabs: Arc::clone(self),
            tab: tab.to_owned(),
            face,
        }
    }

    /// A tab's new report; false when no socket of that tab is open here.
    fn set(&self, tab: &str, focused: bool) -> bool {
        let Some(face) = self.0.lock().get(tab).cloned() else {
            return false;
        };
        face.set(focused);
        true
    }
}

/// A tab's report while its socket is open.
#[derive(Debug)]
pub(crate) struct Attached {
    tabs: Arc<Tabs>,
    tab: String,
    face: Arc<FaceFocus>,
}

impl Drop for Attached {
    fn drop(&mut self) {
        let mut tabs = self.tabs.0.lock();
        // A newer socket of the same tab keeps its own report.
        if tabs
            .get(&self.tab)
            .is_some_and(|face| Arc::ptr_eq(face, &self.face))
        {
            tabs.remove(&self.tab);
        }
    }
}

/// A tab name as the page sends it: short, plain.
pub(crate) fn valid_tab(tab: &str) -> bool {
    !tab.is_empty()
        && tab.len() <= MAX_TAB_CHARS
        && tab
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

pub(crate) fn routes() -> Router<PageState> {
    Router::new().route("/api/agent/focus", post(report))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Report {
    tab: String,
    focused: bool,
}

/// `POST /api/agent/focus`: 204 once recorded, 404 when the tab has no socket here (it is
/// reconnecting: its socket's query carries its focus again).
async fn report(
    State(state): State<PageState>,
    body: Result<axum::Json<Report>, axum::extract::rejection::JsonRejection>,
) -> Result<StatusCode, ApiError> {
    let axum::Json(Report { tab, focused }) = body.map_err(crate::rest::json_error)?;
    if state.0.tabs.set(&tab, focused) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("no open socket for this tab"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tab_counts_while_its_socket_is_open_and_a_newer_socket_keeps_its_report() {
        let feed = AttentionFeed::new();
        let tabs = Arc::new(Tabs::default());
        let first = tabs.attach("t1", true, &feed);
        assert!(feed.seen());
        assert!(tabs.set("t1", false));
        assert!(!feed.seen());
        let second = tabs.attach("t1", true, &feed);
        drop(first);
        assert!(feed.seen(), "the newer socket's report stays");
        drop(second);
        assert!(!feed.seen());
        assert!(!tabs.set("t1", true));
        assert!(valid_tab("0b5d-ab_9"));
        assert!(!valid_tab("a b"));
        assert!(!valid_tab(""));
    }
}
