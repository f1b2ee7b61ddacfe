use pretty_assertions::assert_eq;

use super::{Secret, redact};

#[test]
fn debug_never_shows_the_value() {
    let secret = Secret::new("xai-super-secret-value");
    assert_eq!(format!("{secret:?}"), "Secret(****)");
    assert_eq!(
        format!("{:#?}", Some(secret.clone())),
        "Some(\n    Secret(****),\n)"
    );
    assert_eq!(secret.expose(), "xai-super-secret-value");
}

#[test]
fn equality_compares_the_whole_value() {
    assert_eq!(Secret::new("abc"), Secret::from("abc".to_owned()));
    assert!(Secret::new("abc") != Secret::new("abd"));
    assert!(Secret::new("abc") != Secret::new("abcd"));
}

#[test]
fn redact_masks_every_occurrence() {
    let access = Secret::new("tok-123");
    let refresh = Secret::new("ref-456");
    let empty = Secret::new("");
    assert_eq!(
        redact(
            "a tok-123 b ref-456 c tok-123",
            &[&access, &refresh, &empty]
        ),
        "a **** b **** c ****"
    );
}
