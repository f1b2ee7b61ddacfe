use super::*;

/// The texts a missing credential produces; `corvid chat` and `corvid exec` show them too.
fn messages() -> Vec<String> {
    vec![
        AuthError::NotConfigured {
            mode: AuthMode::ApiKey,
        }
        .to_string(),
        AuthError::NotConfigured {
            mode: AuthMode::OAuth,
        }
        .to_string(),
        AuthError::MissingKey {
            provider: "anthropic".to_owned(),
            variables: vec!["ANTHROPIC_API_KEY".to_owned()],
        }
        .to_string(),
    ]
}

#[test]
fn a_missing_credential_says_a_running_gateway_needs_no_restart() {
    for message in messages() {
        // A chat or exec run reads the env file when it starts: "restart corvid" is wrong there.
        assert!(!message.contains("restart corvid"), "{message}");
        assert!(
            message.ends_with(
                "a running `corvid serve` uses it from its next request, no restart needed"
            ),
            "{message}"
        );
    }
}
