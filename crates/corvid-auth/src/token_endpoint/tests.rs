use pretty_assertions::assert_eq;

use super::{Rejection, truncate};

#[test]
fn truncate_cuts_at_240_characters() {
    assert_eq!(truncate("  short  "), "short");
    let long = "é".repeat(300);
    let cut = truncate(&long);
    assert_eq!(cut.chars().count(), 241);
    assert!(cut.ends_with('…'));
}

#[test]
fn only_400_401_403_are_fatal() {
    let rejection = |status| Rejection {
        status,
        error: None,
        description: None,
        body: String::new(),
    };
    for status in [400, 401, 403] {
        assert!(rejection(status).is_fatal_for_refresh(), "{status}");
    }
    for status in [404, 408, 429] {
        assert!(!rejection(status).is_fatal_for_refresh(), "{status}");
    }
}
