//! The client side of the tests that drive `corvid acp` as a child process over the
//! `agent-client-protocol` crate.

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::AcpAgent;
use agent_client_protocol::v1::schema::{
    PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome,
};
use corvid_test_support::MockUpstream;

use super::CORVID;

/// `corvid acp` with `home` as `CORVID_HOME`, `upstream` as its xAI upstream (key
/// `upstream-key`) and `grok` as the default model; `env` holds more `NAME=value` words.
pub(crate) fn agent(upstream: &MockUpstream, home: &Path, env: &[String]) -> AcpAgent {
    let mut args = vec![
        format!("CORVID_HOME={}", home.display()),
        format!("CORVID_UPSTREAM={}", upstream.base_url()),
        "XAI_API_KEY=upstream-key".to_owned(),
        "CORVID_DEFAULT_MODEL=grok".to_owned(),
    ];
    args.extend_from_slice(env);
    args.extend([CORVID.to_owned(), "acp".to_owned()]);
    AcpAgent::from_args(args).unwrap()
}

/// The answer that allows what `request` asks for, this once.
pub(crate) fn allow_once(request: &RequestPermissionRequest) -> RequestPermissionResponse {
    let allow = request
        .options
        .iter()
        .find(|option| option.kind == PermissionOptionKind::AllowOnce)
        .unwrap();
    RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
        SelectedPermissionOutcome::new(allow.option_id.clone()),
    ))
}

/// Waits for a client's connection to `corvid acp` to end, for two minutes at most.
pub(crate) async fn run_to_end<T>(
    session: impl Future<Output = Result<T, agent_client_protocol::Error>>,
) -> T {
    tokio::time::timeout(Duration::from_secs(120), session)
        .await
        .expect("the ACP session timed out")
        .expect("the ACP session failed")
}
