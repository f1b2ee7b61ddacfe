use super::*;

fn state(mode: SandboxMode) -> SandboxState {
    SandboxState {
        mode,
        landlock_abi: Some(7),
        seccomp: true,
        network: false,
        summary: "landlock ABI 7 + seccomp; network off".to_owned(),
    }
}

#[test]
fn the_sandbox_is_told_in_the_approvals_description() {
    let line = sandbox_line(Some(&state(SandboxMode::Enforced)));
    assert_eq!(
        line,
        "Commands run in the kernel sandbox: landlock ABI 7 + seccomp; network off."
    );
    let options = serde_json::to_value(config_options(
        Mode::Policy(ApprovalPolicy::Ask),
        "grok",
        &["grok".to_owned()],
        &line,
    ))
    .unwrap();
    assert_eq!(
        options[0]["description"],
        format!("What the agent may do without asking. {line}")
    );
    assert!(sandbox_line(Some(&state(SandboxMode::Unavailable))).contains("each one asks first"));
    assert!(sandbox_line(Some(&state(SandboxMode::Off))).contains("turned off"));
    assert!(sandbox_line(None).contains("unknown"));
}
