use std::collections::HashMap;

use clap::Parser;
use corvid_protocol::EventMsg;

use super::*;

#[derive(Debug, Parser)]
struct Line {
    #[command(flatten)]
    agent: AgentArgs,
}

fn args(flags: &[&str]) -> AgentArgs {
    Line::try_parse_from(std::iter::once("corvid").chain(flags.iter().copied()))
        .unwrap()
        .agent
}

/// A `CORVID_HOME` whose config.toml says `approval = "auto-edit"`.
fn loaded_with_auto_edit(home: &std::path::Path) -> Loaded {
    std::fs::write(
        home.join("config.toml"),
        "# mine\napproval = \"auto-edit\"\n",
    )
    .unwrap();
    let env = HashMap::from([
        ("CORVID_HOME".to_owned(), home.display().to_string()),
        ("CORVID_KEYRING".to_owned(), "off".to_owned()),
    ]);
    corvid_config::load(&corvid_config::Flags::default(), &env).unwrap()
}

#[test]
fn the_flag_beats_config_toml_and_config_toml_beats_ask() {
    let home = tempfile::tempdir().unwrap();
    let loaded = loaded_with_auto_edit(home.path());
    assert_eq!(args(&[]).approval(&loaded), ApprovalPolicy::AutoEdit);
    assert_eq!(
        args(&["--approval", "full-auto"]).approval(&loaded),
        ApprovalPolicy::FullAuto
    );
    // `ask` given on the line is a choice too, not the absence of one.
    assert_eq!(
        args(&["--approval", "ask"]).approval(&loaded),
        ApprovalPolicy::Ask
    );
    let bare = tempfile::tempdir().unwrap();
    let env = HashMap::from([("CORVID_HOME".to_owned(), bare.path().display().to_string())]);
    let plain = corvid_config::load(&corvid_config::Flags::default(), &env).unwrap();
    assert_eq!(args(&[]).approval(&plain), ApprovalPolicy::Ask);
}

/// The page's and ACP's sessions start from `agent_config`, the terminal's from `start`.
#[tokio::test]
async fn every_front_ends_new_session_starts_with_the_configured_policy() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let loaded = loaded_with_auto_edit(home.path());
    let folders = corvid_agent::project_folders(project.path(), Some(project.path()));
    let config = crate::compose::agent_config(&loaded, folders, "grok-4".to_owned(), "acp");
    assert_eq!(config.approval, ApprovalPolicy::AutoEdit);

    let project_flag = project.path().display().to_string();
    for (flags, expected) in [
        (vec!["--project", project_flag.as_str()], "auto-edit"),
        (
            vec!["--project", project_flag.as_str(), "--approval", "ask"],
            "ask",
        ),
    ] {
        let (session, mut events) =
            start(&loaded, &args(&flags), "exec", OpenConversation::Current)
                .await
                .unwrap();
        let ready = loop {
            let frame = events.recv().await.expect("the session ended before ready");
            if let Some(EventMsg::Ready(ready)) = frame.event().map(|event| event.msg.clone()) {
                break ready;
            }
        };
        assert_eq!(ready.approval_policy.as_str(), expected, "{flags:?}");
        session.close().await;
    }
}

/// With only a local server's models usable, the xAI names (no key) go apart; with a key, not.
#[test]
fn names_without_a_credential_are_listed_apart() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[aliases]\nlocal = \"ollama/qwen\"\n\n[providers.ollama]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let load = |extra: &[(&str, &str)]| {
        let mut env = HashMap::from([
            ("CORVID_HOME".to_owned(), home.path().display().to_string()),
            ("CORVID_KEYRING".to_owned(), "off".to_owned()),
        ]);
        env.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        corvid_config::load(&corvid_config::Flags::default(), &env).unwrap()
    };
    let names = || vec!["grok-4.6".to_owned(), "local".to_owned()];
    let registry = |loaded: &Loaded| crate::compose::registry(loaded).unwrap();

    let (ready, apart) = split_by_credential(&registry(&load(&[])), names());
    assert_eq!(ready, vec!["local".to_owned()]);
    assert_eq!(apart, vec!["grok-4.6".to_owned()]);

    let (ready, apart) = split_by_credential(&registry(&load(&[("XAI_API_KEY", "k")])), names());
    assert_eq!(ready, names());
    assert!(apart.is_empty());
}
