use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::local_window::ollama_window;

fn listed(id: &str, window: Option<u64>, max_output: Option<u64>) -> ListedModel {
    ListedModel {
        id: id.to_owned(),
        window,
        max_output,
    }
}

#[test]
fn every_list_shape_gives_its_ids_and_the_limits_it_states() {
    // vLLM: max_model_len; OpenRouter-like: context_length and a max_completion_tokens.
    let openai = json!({"object": "list", "data": [
        {"id": "qwen", "object": "model", "max_model_len": 32_768},
        {"id": "router/m", "context_length": 128_000, "max_completion_tokens": 8_192},
        {"id": "plain", "object": "model"},
        {"object": "model"}
    ]});
    assert_eq!(
        parse_list(&openai),
        vec![
            listed("qwen", Some(32_768), None),
            listed("router/m", Some(128_000), Some(8_192)),
            listed("plain", None, None),
        ]
    );
    // Anthropic: max_input_tokens and max_tokens.
    let anthropic = json!({"data": [{"type": "model", "id": "claude-sonnet-4-5",
        "max_input_tokens": 200_000, "max_tokens": 64_000}], "has_more": false});
    assert_eq!(
        parse_list(&anthropic),
        vec![listed("claude-sonnet-4-5", Some(200_000), Some(64_000))]
    );
    // Gemini: inputTokenLimit and outputTokenLimit, names under models/.
    let gemini = json!({"models": [{"name": "models/gemini-2.5-pro",
        "inputTokenLimit": 1_048_576, "outputTokenLimit": 65_536}]});
    assert_eq!(
        parse_list(&gemini),
        vec![listed("gemini-2.5-pro", Some(1_048_576), Some(65_536))]
    );
    // A zero is no statement.
    assert_eq!(
        parse_list(&json!({"data": [{"id": "z", "max_model_len": 0}]})),
        vec![listed("z", None, None)]
    );
    assert_eq!(parse_list(&json!({"error": "nope"})), vec![]);
}

#[test]
fn ollama_show_gives_the_modelfile_num_ctx_else_the_trained_length() {
    let show = json!({
        "parameters": "stop \"<|im_end|>\"\nnum_ctx 16384\ntemperature 0.2",
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32_768}
    });
    assert_eq!(ollama_window(&show), Some(16_384));
    let trained = json!({"model_info": {"general.architecture": "llama",
        "llama.context_length": 131_072, "llama.embedding_length": 4096}});
    assert_eq!(ollama_window(&trained), Some(131_072));
    assert_eq!(ollama_window(&json!({"error": "model not found"})), None);
}
