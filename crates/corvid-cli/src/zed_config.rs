//! `corvid zed-config`: the settings.json keys that point Zed at corvid, to merge into the
//! existing root object (Zed reads only the first top-level object).

use corvid_config::Config;
use serde_json::json;

const PROMPT_FORMATS: &[&str] = &[
    "qwen",
    "code_gemma",
    "star_coder",
    "code_llama",
    "deepseek_coder",
    "codestral",
    "glm",
];

pub(crate) fn render(config: &Config, model: &str, prompt_format: &str) -> anyhow::Result<String> {
    if !PROMPT_FORMATS.contains(&prompt_format) {
        anyhow::bail!(
            "unknown --prompt-format {prompt_format:?}: expected one of {} (zeta formats are not fill-in-the-middle and do not work with corvid)",
            PROMPT_FORMATS.join(", ")
        );
    }
    let base = config.local_base_url();
    let upstream_model = config.resolve_model(model);
    let settings = json!({
        "language_models": {
            "openai_compatible": {
                "corvid": {
                    "api_url": format!("{base}/v1"),
                    "available_models": [{
                        "name": model,
                        "display_name": format!("{model} via corvid ({upstream_model})"),
                        "max_tokens": 256000,
                        "capabilities": {
                            "tools": true,
                            "images": false,
                            "parallel_tool_calls": false,
                            "prompt_cache_key": false,
                            "chat_completions": true
                        }
                    }]
                }
            }
        },
        "edit_predictions": {
            "provider": "open_ai_compatible_api",
            "open_ai_compatible_api": {
                "api_url": format!("{base}/v1/completions"),
                "model": model,
                "prompt_format": prompt_format,
                "max_output_tokens": 256
            }
        }
    });
    let body = serde_json::to_string_pretty(&settings)?;
    Ok(format!(
        "// Merge these keys into the root object of Zed's settings.json (Zed reads only the first\n\
         // top-level object; do not paste a second one). Zed needs a non-empty key for the\n\
         // provider: set CORVID_API_KEY=anything in Zed's environment or in its UI — corvid ignores\n\
         // it and uses your xAI credential. prompt_format is explicit on purpose: with \"infer\",\n\
         // edit predictions are silently disabled for a model named {model:?}.\n{body}\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_point_at_the_configured_address() {
        let config = Config {
            port: 9999,
            ..Config::default()
        };
        let text = render(&config, "supergrok", "qwen").unwrap();
        let json_start = text.find('{').unwrap();
        let value: serde_json::Value = serde_json::from_str(&text[json_start..]).unwrap();
        assert_eq!(
            value["language_models"]["openai_compatible"]["corvid"]["api_url"],
            "http://127.0.0.1:9999/v1"
        );
        let edit = &value["edit_predictions"];
        assert_eq!(edit["provider"], "open_ai_compatible_api");
        assert_eq!(
            edit["open_ai_compatible_api"]["api_url"],
            "http://127.0.0.1:9999/v1/completions"
        );
        assert_eq!(edit["open_ai_compatible_api"]["prompt_format"], "qwen");
        assert!(render(&config, "supergrok", "zeta").is_err());
    }
}
