use std::collections::HashMap;
use std::path::Path;

use corvid_config::Flags;
use pretty_assertions::assert_eq;

use super::*;

fn registry(home: &Path, toml: &str, env: &[(&str, &str)]) -> Registry {
    std::fs::write(home.join("config.toml"), toml).unwrap();
    let mut vars: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    vars.insert("CORVID_HOME".to_owned(), home.display().to_string());
    let loaded = corvid_config::load(&Flags::default(), &vars).unwrap();
    Registry::from_config(&loaded, reqwest::Client::new()).unwrap()
}

fn attempts(plan: &Plan) -> Vec<String> {
    plan.attempts
        .iter()
        .map(|route| format!("{}#{}", route.target(), route.key))
        .collect()
}

const ROUTED: &str = r#"
[routes.sonnet]
targets = ["anthropic/claude-sonnet-4-5", "openai/gpt-5", "gemini/gemini-2.5-pro"]
[providers.openai]
api_key_envs = ["OPENAI_KEY_2"]
[router]
background = "xai/grok-4-fast-non-reasoning"
think = "sonnet"
long_context = "gemini/gemini-2.5-pro"
long_context_threshold = 50
image = "openai/gpt-5"
web_search = "xai/grok-4.6"
"#;

fn routed(home: &Path) -> Registry {
    registry(
        home,
        ROUTED,
        &[
            ("ANTHROPIC_API_KEY", "a"),
            ("OPENAI_API_KEY", "o1"),
            ("OPENAI_KEY_2", "o2"),
        ],
    )
}

#[test]
fn a_route_expands_into_its_targets_and_their_keys_skipping_what_is_not_set_up() {
    let home = tempfile::tempdir().unwrap();
    let registry = routed(home.path());
    assert_eq!(registry.provider("openai").unwrap().keys().len(), 2);
    let plan = registry.plan("sonnet", None, None).unwrap();
    let tried = attempts(&plan);
    assert_eq!(tried[0], "anthropic/claude-sonnet-4-5#0");
    assert_eq!(tried.len(), 3, "{tried:?}");
    assert!(tried[1..].contains(&"openai/gpt-5#0".to_owned()));
    assert!(tried[1..].contains(&"openai/gpt-5#1".to_owned()));
    assert_eq!(plan.route.as_deref(), Some("sonnet"));
    assert_eq!(plan.skipped.len(), 1, "gemini has no key");
    assert_eq!(plan.skipped[0].0, "gemini/gemini-2.5-pro");
    // The pool takes turns: the next request starts at the other key.
    let next = attempts(&registry.plan("sonnet", None, None).unwrap());
    assert_ne!(next[1], tried[1]);
    // A plain model is its own single target.
    let plain = registry.plan("claude-opus-4-1", None, None).unwrap();
    assert_eq!(attempts(&plain), ["anthropic/claude-opus-4-1#0"]);
    assert_eq!(plain.route, None);
    assert!(plain.attempts[0].retry_in_place);
    // Another target follows the first: it moves on rather than retrying in place. The first
    // openai key is followed by its other key only, and the last attempt keeps its retries.
    let retried: Vec<bool> = plan
        .attempts
        .iter()
        .map(|route| route.retry_in_place)
        .collect();
    assert_eq!(retried, [false, true, true]);
    assert_eq!(plan.attempts[0].in_place_retries(), Some(0));
    assert_eq!(plan.attempts[2].in_place_retries(), None);
}

#[test]
fn each_rule_fires_on_its_shape() {
    let home = tempfile::tempdir().unwrap();
    let registry = routed(home.path());
    let first = |requested: &str, shape: RequestShape| {
        let plan = registry.plan(requested, Some(&shape), None).unwrap();
        (plan.rule, plan.attempts[0].target())
    };
    let plain = RequestShape::default();
    assert_eq!(
        first("claude-opus-4-1", plain.clone()),
        (None, "anthropic/claude-opus-4-1".to_owned())
    );
    assert_eq!(
        first("claude-haiku-4-5-20251001", plain.clone()),
        (
            Some("background"),
            "xai/grok-4-fast-non-reasoning".to_owned()
        )
    );
    assert_eq!(
        first(
            "claude-opus-4-1",
            RequestShape {
                thinking: true,
                ..plain.clone()
            }
        ),
        (Some("think"), "anthropic/claude-sonnet-4-5".to_owned())
    );
    // Long context comes first, but its target (gemini) has no key here: the next firing
    // rule serves.
    assert_eq!(
        first(
            "claude-opus-4-1",
            RequestShape {
                estimated_tokens: 51,
                thinking: true,
                ..plain.clone()
            }
        ),
        (Some("think"), "anthropic/claude-sonnet-4-5".to_owned())
    );
    assert_eq!(
        first(
            "claude-opus-4-1",
            RequestShape {
                estimated_tokens: 51,
                ..plain.clone()
            }
        ),
        (None, "anthropic/claude-opus-4-1".to_owned())
    );
    assert_eq!(
        first(
            "claude-opus-4-1",
            RequestShape {
                images: true,
                ..plain.clone()
            }
        ),
        (Some("image"), "openai/gpt-5".to_owned())
    );
    assert_eq!(
        first(
            "claude-opus-4-1",
            RequestShape {
                web_search: true,
                ..plain
            }
        ),
        (Some("web_search"), "xai/grok-4.6".to_owned())
    );
}

#[test]
fn the_shape_is_read_from_a_request() {
    let request = corvid_wire::codec::decode_request(
        corvid_wire::Dialect::Anthropic,
        br#"{"model":"m","max_tokens":10,"thinking":{"type":"enabled","budget_tokens":2000},
            "tools":[{"type":"web_search_20250305","name":"web_search"}],
            "messages":[{"role":"user","content":[{"type":"text","text":"hi"},
              {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}]}"#,
        "m",
    )
    .unwrap();
    let shape = RequestShape::of(&request);
    assert!(
        shape.thinking && shape.images && shape.web_search,
        "{shape:?}"
    );
    assert!(shape.estimated_tokens > 0);
    let plain = corvid_wire::codec::decode_request(
        corvid_wire::Dialect::OpenAiChat,
        br#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#,
        "m",
    )
    .unwrap();
    let shape = RequestShape::of(&plain);
    assert!(!shape.thinking && !shape.images && !shape.web_search);
}

#[test]
fn a_conversation_goes_back_where_it_began_while_that_works() {
    let home = tempfile::tempdir().unwrap();
    let registry = routed(home.path());
    let conversation = conversation_key(None, "sonnet", b"first turn");
    let other = conversation_key(None, "sonnet", b"another first turn");
    assert_ne!(conversation, other);
    assert_eq!(
        conversation,
        conversation_key(None, "sonnet", b"first turn")
    );
    // The first turn went to openai's second key (its first target failed).
    let plan = registry.plan("sonnet", None, Some(conversation)).unwrap();
    assert!(!plan.sticky && plan.began_on.is_none());
    let openai = plan
        .attempts
        .iter()
        .find(|route| route.provider.name() == "openai" && route.key == 1)
        .unwrap()
        .clone();
    registry.stick(conversation, &openai);
    for _ in 0..3 {
        let again = registry.plan("sonnet", None, Some(conversation)).unwrap();
        assert_eq!(attempts(&again)[0], "openai/gpt-5#1");
        assert!(again.sticky);
        assert_eq!(again.began_on.as_deref(), Some("openai"));
    }
    // Another conversation is not moved by it.
    let fresh = registry.plan("sonnet", None, Some(other)).unwrap();
    assert_eq!(attempts(&fresh)[0], "anthropic/claude-sonnet-4-5#0");
    // Its key resting: the conversation must move; the plan says where it began.
    openai.provider.keys().rest(1, None);
    let moved = registry.plan("sonnet", None, Some(conversation)).unwrap();
    assert!(!moved.sticky);
    assert_eq!(attempts(&moved)[0], "anthropic/claude-sonnet-4-5#0");
    assert!(!attempts(&moved).contains(&"openai/gpt-5#1".to_owned()));
    assert_eq!(moved.began_on.as_deref(), Some("openai"));
}

#[test]
fn a_pool_alone_is_enough_and_a_key_is_counted_once() {
    let home = tempfile::tempdir().unwrap();
    let registry = registry(
        home.path(),
        "[providers.openai]\napi_key_envs = [\"K1\", \"K2\", \"K3\"]\n",
        &[("K1", "one"), ("K2", "one"), ("K3", "three")],
    );
    let openai = registry.provider("openai").unwrap();
    assert_eq!(openai.keys().len(), 2, "K2 repeats K1");
    assert!(openai.is_available());
}

#[test]
fn a_provider_of_its_own_with_only_a_pool_sends_a_key_with_every_request() {
    let home = tempfile::tempdir().unwrap();
    let registry = registry(
        home.path(),
        "[providers.pooled]\nkind = \"anthropic\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         api_key_envs = [\"POOL_KEY_1\", \"POOL_KEY_2\"]\nmodels = [\"claude-sonnet-4-5\"]\n",
        &[("POOL_KEY_1", "one"), ("POOL_KEY_2", "two")],
    );
    let pooled = registry.provider("pooled").unwrap();
    assert_eq!(
        pooled.keys().len(),
        2,
        "no keyless member beside the two keys"
    );
    for index in 0..pooled.keys().len() {
        assert!(
            !pooled.keys().member(index).credential().is_none(),
            "member {index}"
        );
    }
    // Not taken for a keyless local server (no Ollama probe of an Anthropic provider).
    assert!(!crate::quirks::is_local_server(pooled));
}
