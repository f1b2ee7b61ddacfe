//! The one place corvid makes upstream HTTP requests: a shared client with connect and idle
//! timeouts, credential injection, retries with backoff before the first byte, one
//! refresh-and-retry after a 401, and classified errors; and the one model-call pipeline
//! (`Route::prepare` → `ModelCall::send` → `ModelReply`) the gateway's translation and the
//! agent both use, with the Zed account as one more backend behind it.

mod backoff;
mod context_windows;
mod error;
mod failover;
mod last_failure;
mod local_window;
mod model_call;
pub use model_call::RoutedReply;
mod model_info;
mod model_list;
mod pipeline;
mod pool;
mod provider;
pub mod quirks;
mod registry;
mod reuse;
mod routing;
mod transport;
mod upstream;
pub mod zed;

pub use backoff::{backoff_delay, parse_retry_after};
pub use context_windows::{ContextWindow, WindowSource, family_window};
pub use error::{CallError, FailureClass, ProviderError, Refusal, Retry, RouteError, error_chain};
pub use failover::{fails_over, rests_key};
pub use last_failure::LastFailure;
pub use model_info::{ModelCapabilities, ModelInfo};
pub use pipeline::{ModelCall, ModelReply, ModelStream, WholeFailure, broken_stream};
pub use pool::{DEFAULT_COOLDOWN, KeyPool};
pub use provider::{ListedFacts, Provider};
pub use quirks::prepare_request;
pub use registry::{Registry, Route, dialect_of, zed_hosts};
pub use routing::{Moved, Plan, RequestShape, conversation_key};
pub use transport::{BoxError, IdleTimeout, Transport, UpstreamBody, is_timeout};
pub use upstream::{
    ANTHROPIC_VERSION, AuthStyle, Upstream, UpstreamRequest, UpstreamResponse, build_transport,
};
pub use zed::ZedService;
