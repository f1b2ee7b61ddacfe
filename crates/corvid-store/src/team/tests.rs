use super::*;

#[test]
fn globs_match_prefixes_suffixes_and_providers() {
    assert!(glob_matches("grok*", "grok-4"));
    assert!(glob_matches("anthropic/*", "anthropic/claude"));
    assert!(glob_matches("*-mini", "gpt-5-mini"));
    assert!(glob_matches("a*b*c", "axxbyyc"));
    assert!(!glob_matches("grok*", "gpt-5"));
    assert!(!glob_matches("a*b*c", "axxbyy"));
    assert!(glob_matches("exact", "exact"));
}

#[test]
fn windows_are_utc_days_and_months() {
    // 2026-12-07T06:00:00Z
    let now = 1_796_623_200_000;
    let (start, end) = window_of(Period::Day, now);
    assert_eq!(end - start, 86_400_000);
    assert!(start <= now && now < end);
    let (start, end) = window_of(Period::Month, now);
    // 2026-12-01 and 2027-01-01.
    assert_eq!(start, 1_796_083_200_000);
    assert_eq!(end, 1_798_761_600_000);
}

#[test]
fn a_key_without_patterns_allows_every_model() {
    let mut key = KeyInfo {
        id: 1,
        name: "a".into(),
        public_id: "p".into(),
        team_id: None,
        team: None,
        models: vec![],
        rpm: None,
        tpm: None,
        revoked: false,
        budgets: vec![],
    };
    assert!(key.allows_model("x", "xai", "grok-4"));
    assert!(!key.needs_hold());
    key.models = vec!["anthropic/*".into()];
    assert!(!key.allows_model("grok-4", "xai", "grok-4"));
    assert!(key.allows_model("claude", "anthropic", "claude-sonnet"));
}
