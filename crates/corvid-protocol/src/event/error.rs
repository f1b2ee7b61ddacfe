//! Classified failures, as `error` events and error replies carry them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The payload of `error`: a classified failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorNotification {
    /// What kind of failure.
    pub class: ErrorClass,
    /// What went wrong, for people; never contains a secret.
    pub message: String,
    /// One sentence saying what the user should do (`Run corvid login xai.`).
    pub next_action: String,
    /// Whether sending the same message again may succeed without the user changing anything.
    pub retryable: bool,
}

impl ErrorNotification {
    /// A failure of `class`, with the class's own `next_action` and `retryable`.
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        Self {
            class,
            message: message.into(),
            next_action: class.next_action().to_owned(),
            retryable: class.is_retryable(),
        }
    }

    /// The same failure with a more precise next action than the class's.
    pub fn with_next_action(mut self, next_action: impl Into<String>) -> Self {
        self.next_action = next_action.into();
        self
    }

    /// An operation that cannot be carried out as sent (`invalid_request`).
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorClass::InvalidRequest, message)
    }
}

impl ErrorClass {
    /// The sentence a failure of this class ends with. Every front end shows it as it is, so it
    /// says what to do in words, never with one front end's command.
    pub fn next_action(self) -> &'static str {
        match self {
            Self::NotConfigured => {
                "Choose another model (`corvid models` lists them) or set its provider's key."
            }
            Self::AuthenticationRejected => {
                "Check the provider's key, or sign in again with `corvid login`, then resend."
            }
            Self::RateLimited => "Wait a little and resend.",
            Self::ServerError => {
                "The provider is having trouble; resend in a moment or try another model."
            }
            Self::Network => "Check the network connection and resend.",
            Self::UnexpectedResponse => {
                "The provider answered something corvid could not use; try again or another model."
            }
            Self::Tool => "The tool failed; the model was told and can try another way.",
            Self::Cancelled => "Send a new message when ready.",
            Self::StepLimit => "Send a message to let the agent continue.",
            Self::InvalidRequest => "Check what was sent; the session is unchanged.",
            Self::Internal => "Try again; if it persists, report the problem.",
        }
    }

    /// Whether a failure of this class may pass by itself.
    pub fn is_retryable(self) -> bool {
        match self {
            Self::RateLimited | Self::ServerError | Self::Network | Self::Internal => true,
            Self::NotConfigured
            | Self::AuthenticationRejected
            | Self::UnexpectedResponse
            | Self::Tool
            | Self::Cancelled
            | Self::StepLimit
            | Self::InvalidRequest => false,
        }
    }
}

/// The class of a failure, so front ends can react without parsing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// No provider, credential or model is configured for the request.
    NotConfigured,
    /// The provider refused the credential (401/403).
    AuthenticationRejected,
    /// The provider is rate limiting (429) or the quota is used up.
    RateLimited,
    /// The provider failed (5xx).
    ServerError,
    /// The provider could not be reached, or the connection broke or went silent.
    Network,
    /// The provider answered something corvid cannot read.
    UnexpectedResponse,
    /// A tool failed in a way the turn cannot go on from.
    Tool,
    /// The user cancelled.
    Cancelled,
    /// The turn reached its step cap.
    StepLimit,
    /// The operation cannot be carried out as sent: an incompatible protocol version, an unknown
    /// conversation or proposal id, a `send` while a turn is running.
    InvalidRequest,
    /// A failure inside corvid itself (the conversation store, a bug).
    Internal,
}
