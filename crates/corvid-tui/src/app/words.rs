//! How the chat says things that other faces (`corvid exec`) say the same way.

use corvid_protocol::{ErrorClass, SandboxMode, SandboxState};

/// An error class as people say it.
pub fn class_words(class: ErrorClass) -> &'static str {
    match class {
        ErrorClass::NotConfigured => "not configured",
        ErrorClass::AuthenticationRejected => "sign-in rejected",
        ErrorClass::RateLimited => "rate limited",
        ErrorClass::ServerError => "provider failed",
        ErrorClass::Network => "network",
        ErrorClass::UnexpectedResponse => "unexpected answer",
        ErrorClass::Tool => "tool failed",
        ErrorClass::Cancelled => "cancelled",
        ErrorClass::StepLimit => "step limit",
        ErrorClass::InvalidRequest => "not possible now",
        ErrorClass::Internal => "internal",
    }
}

/// The status line's word for the sandbox.
pub(super) fn sandbox_word(sandbox: &SandboxState) -> String {
    match sandbox.mode {
        SandboxMode::Enforced => "on",
        SandboxMode::Unavailable => "unavailable",
        SandboxMode::Off => "off",
    }
    .to_owned()
}

/// The start-up line about the sandbox: its layers, or plainly why there are none.
pub fn sandbox_banner(sandbox: &SandboxState) -> String {
    match sandbox.mode {
        SandboxMode::Unavailable => format!(
            "sandbox {}. Turn it off explicitly with --sandbox off to stop the asking.",
            sandbox.summary
        ),
        SandboxMode::Enforced | SandboxMode::Off => format!("sandbox: {}", sandbox.summary),
    }
}
