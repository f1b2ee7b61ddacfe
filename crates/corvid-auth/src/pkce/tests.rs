use pretty_assertions::assert_eq;

use super::{Pkce, challenge_for, random_hex};

#[test]
fn rfc7636_appendix_b_example() {
    assert_eq!(
        challenge_for("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    );
}

#[test]
fn generated_values_have_the_right_shape() {
    let pkce = Pkce::generate();
    assert_eq!(pkce.verifier.expose().len(), 43);
    assert_eq!(pkce.challenge, challenge_for(pkce.verifier.expose()));
    let state = random_hex(16);
    assert_eq!(state.len(), 32);
    assert!(state.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(random_hex(16) != state);
}
