use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;

/// Builds a prompt exactly as Zed's `format_fim_prompt` does
/// (`crates/edit_prediction/src/fim.rs`), keyed by its `prompt_format` setting value.
fn zed_prompt(prompt_format: &str, prefix: &str, suffix: &str) -> String {
    match prompt_format {
        "code_llama" => format!("<PRE> {prefix} <SUF>{suffix} <MID>"),
        "star_coder" => format!("<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>"),
        "deepseek_coder" => {
            format!("<｜fim▁begin｜>{prefix}<｜fim▁hole｜>{suffix}<｜fim▁end｜>")
        }
        "qwen" | "code_gemma" => {
            format!("<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>")
        }
        "codestral" => format!("[SUFFIX]{suffix}[PREFIX]{prefix}"),
        "glm" => format!("<|code_prefix|>{prefix}<|code_suffix|>{suffix}<|code_middle|>"),
        other => panic!("unknown prompt_format {other}"),
    }
}

fn prompt(prefix: &str, suffix: &str, format: Option<FimFormat>) -> FimPrompt {
    FimPrompt {
        prefix: prefix.to_owned(),
        suffix: suffix.to_owned(),
        format,
    }
}

#[test]
fn split_prompt_recovers_every_zed_format() {
    let formats = [
        ("qwen", FimFormat::Qwen),
        ("code_gemma", FimFormat::Qwen),
        ("star_coder", FimFormat::StarCoder),
        ("code_llama", FimFormat::CodeLlama),
        ("deepseek_coder", FimFormat::DeepseekCoder),
        ("codestral", FimFormat::Codestral),
        ("glm", FimFormat::Glm),
    ];
    let samples = [
        (
            "fn add(a: i32, b: i32) -> i32 {\n    if a > 0 {\n        ",
            "\n    }\n    a + b\n}\n",
        ),
        ("use std::fmt;\n\nfn main() {\n    let x = ", ""),
        ("", "\n\tindented();\n}\n"),
        ("", ""),
        // Spaces at the edges must survive Code Llama's format spaces.
        ("let total = ", " + 1;  "),
        ("  x", "y  "),
        // Code that mentions another format's markers.
        ("let s = \"<fim_prefix>[PREFIX]\";\n", "\"<|fim_middle|>\""),
    ];
    for (prompt_format, format) in formats {
        for (prefix, suffix) in samples {
            let zed = zed_prompt(prompt_format, prefix, suffix);
            assert_eq!(
                split_prompt(&zed, None),
                prompt(prefix, suffix, Some(format)),
                "{prompt_format}: {zed:?}"
            );
        }
    }
}

#[test]
fn split_prompt_reads_the_reference_example() {
    let example =
        "<|fim_prefix|>fn add(a: i32, b: i32) -> i32 {\n    <|fim_suffix|>\n}<|fim_middle|>";
    assert_eq!(
        split_prompt(example, None),
        prompt(
            "fn add(a: i32, b: i32) -> i32 {\n    ",
            "\n}",
            Some(FimFormat::Qwen)
        ),
    );
}

#[test]
fn split_prompt_without_markers_is_all_prefix() {
    let text = "def greet(name):\n    return ";
    assert_eq!(split_prompt(text, None), prompt(text, "", None));
    assert_eq!(split_prompt("", None), prompt("", "", None));
}

#[test]
fn split_prompt_prefers_an_explicit_suffix() {
    let cases = [
        (
            "plain prompt",
            "let x = ",
            Some(")"),
            prompt("let x = ", ")", None),
        ),
        (
            "markers are removed, text kept in document order",
            "<fim_prefix>a<fim_suffix>b<fim_middle>",
            Some("c"),
            prompt("ab", "c", Some(FimFormat::StarCoder)),
        ),
        (
            "codestral in document order",
            "[SUFFIX]b[PREFIX]a",
            Some("c"),
            prompt("ab", "c", Some(FimFormat::Codestral)),
        ),
        (
            "an empty explicit suffix is ignored",
            "<fim_prefix>a<fim_suffix>b<fim_middle>",
            Some(""),
            prompt("a", "b", Some(FimFormat::StarCoder)),
        ),
        (
            "empty on a plain prompt",
            "a",
            Some(""),
            prompt("a", "", None),
        ),
    ];
    for (name, text, suffix, expected) in cases {
        assert_eq!(split_prompt(text, suffix), expected, "{name}");
    }
}

#[test]
fn split_prompt_survives_partial_markers() {
    use FimFormat::{CodeLlama, Codestral, DeepseekCoder, Glm, Qwen, StarCoder};
    let cases = [
        ("<|fim_prefix|>abc", prompt("abc", "", Some(Qwen))),
        ("abc<|fim_suffix|>def", prompt("abc", "def", Some(Qwen))),
        (
            "<|fim_prefix|>abc<|fim_suffix|>def",
            prompt("abc", "def", Some(Qwen)),
        ),
        (
            "<|fim_prefix|>abc<|fim_middle|>",
            prompt("abc", "", Some(Qwen)),
        ),
        ("abc<|fim_middle|>", prompt("abc", "", Some(Qwen))),
        // Text after the middle marker is a prefilled start of the middle.
        (
            "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>c",
            prompt("ac", "b", Some(Qwen)),
        ),
        (
            "<|fim_prefix|>a<|fim_middle|>c",
            prompt("ac", "", Some(Qwen)),
        ),
        // Text before the first marker is kept.
        (
            "header\n<fim_prefix>a<fim_suffix>b<fim_middle>",
            prompt("header\na", "b", Some(StarCoder)),
        ),
        ("<fim_suffix>", prompt("", "", Some(StarCoder))),
        ("<fim_middle>", prompt("", "", Some(StarCoder))),
        ("<PRE> abc", prompt("abc", "", Some(CodeLlama))),
        (
            "<PRE>abc<SUF>def<MID>",
            prompt("abc", "def", Some(CodeLlama)),
        ),
        ("<PRE> a <SUF>", prompt("a", "", Some(CodeLlama))),
        ("<｜fim▁begin｜>abc", prompt("abc", "", Some(DeepseekCoder))),
        ("abc<｜fim▁hole｜>", prompt("abc", "", Some(DeepseekCoder))),
        ("S[PREFIX]P", prompt("P", "S", Some(Codestral))),
        ("[SUFFIX]S", prompt("", "S", Some(Codestral))),
        ("P[SUFFIX]S", prompt("P", "S", Some(Codestral))),
        ("<|code_suffix|>tail", prompt("", "tail", Some(Glm))),
        // No leading marker: the first format in detection order with a marker wins.
        (
            "x <fim_middle> y <|code_middle|>",
            prompt("x  y <|code_middle|>", "", Some(StarCoder)),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(split_prompt(text, None), expected, "{text:?}");
    }
}

#[test]
fn split_prompt_trusts_the_leading_marker_over_detection_order() {
    // A star_coder prompt whose code mentions qwen's marker must not be read as qwen.
    let text = zed_prompt("star_coder", "let marker = \"<|fim_prefix|>\";\n", "}\n");
    assert_eq!(
        split_prompt(&text, None),
        prompt(
            "let marker = \"<|fim_prefix|>\";\n",
            "}\n",
            Some(FimFormat::StarCoder)
        ),
    );
}

fn request(model: &str, prompt: &str) -> CompletionRequest {
    CompletionRequest {
        model: model.to_owned(),
        prompt: prompt.to_owned(),
        suffix: None,
        max_tokens: None,
        stop: Vec::new(),
        stream: false,
        temperature: None,
        top_p: None,
    }
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|value| (*value).to_owned()).collect()
}

#[test]
fn completion_request_parses_what_clients_send() {
    let fourteen: Vec<String> = (0..14).map(|index| format!("<stop{index}>")).collect();
    let cases = [
        (
            "zed",
            json!({"model":"supergrok","prompt":"<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>",
                   "max_tokens":256,"stop":["<|endoftext|>","<|fim_prefix|>"]}),
            CompletionRequest {
                max_tokens: Some(256),
                stop: strings(&["<|endoftext|>", "<|fim_prefix|>"]),
                ..request("supergrok", "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>")
            },
        ),
        (
            "minimal",
            json!({"model":"m","prompt":"p"}),
            request("m", "p"),
        ),
        (
            "array prompt takes the first element",
            json!({"model":"m","prompt":["first","second"]}),
            request("m", "first"),
        ),
        (
            "stop as a string",
            json!({"model":"m","prompt":"p","stop":"\n\n"}),
            CompletionRequest {
                stop: strings(&["\n\n"]),
                ..request("m", "p")
            },
        ),
        (
            "fourteen stops from older Zed",
            json!({"model":"m","prompt":"p","stop":fourteen}),
            CompletionRequest {
                stop: fourteen.clone(),
                ..request("m", "p")
            },
        ),
        (
            "every field, unknown ones ignored",
            json!({"model":"m","prompt":"p","suffix":"s","max_tokens":64,"stop":[],
                   "stream":true,"temperature":0.2,"top_p":1,"n":1,"echo":false}),
            CompletionRequest {
                suffix: Some("s".to_owned()),
                max_tokens: Some(64),
                stream: true,
                temperature: Some(0.2),
                top_p: Some(1.0),
                ..request("m", "p")
            },
        ),
        (
            "nulls are absent",
            json!({"model":"m","prompt":"p","suffix":null,"max_tokens":null,"stop":null,
                   "stream":null,"temperature":null,"top_p":null}),
            request("m", "p"),
        ),
    ];
    for (name, body, expected) in cases {
        let parsed = CompletionRequest::from_json(body.to_string().as_bytes());
        assert_eq!(parsed.ok(), Some(expected), "{name}");
    }
}

#[test]
fn completion_request_errors_name_the_field() {
    const PROMPT: &str = "field `prompt` must be a string or a non-empty array of strings \
                          (arrays of token ids are not supported)";
    const MAX_TOKENS: &str = "field `max_tokens` must be a non-negative 32-bit integer";
    const STOP: &str = "field `stop` must be a string or an array of strings";
    let cases: [(&str, Option<&str>, &str); 21] = [
        (
            "{\"model\":",
            None,
            "request body is not valid JSON: EOF while parsing a value at line 1 column 9",
        ),
        (
            "not json",
            None,
            "request body is not valid JSON: expected ident at line 1 column 2",
        ),
        ("[]", None, "request body must be a JSON object"),
        (
            r#"{"prompt":"p"}"#,
            Some("model"),
            "missing required field `model`",
        ),
        (
            r#"{"model":null,"prompt":"p"}"#,
            Some("model"),
            "missing required field `model`",
        ),
        (
            r#"{"model":7,"prompt":"p"}"#,
            Some("model"),
            "field `model` must be a non-empty string",
        ),
        (
            r#"{"model":"","prompt":"p"}"#,
            Some("model"),
            "field `model` must be a non-empty string",
        ),
        (
            r#"{"model":"m"}"#,
            Some("prompt"),
            "missing required field `prompt`",
        ),
        (r#"{"model":"m","prompt":[1,2,3]}"#, Some("prompt"), PROMPT),
        (
            r#"{"model":"m","prompt":[[1,2],[3]]}"#,
            Some("prompt"),
            PROMPT,
        ),
        (r#"{"model":"m","prompt":[]}"#, Some("prompt"), PROMPT),
        (r#"{"model":"m","prompt":["a",1]}"#, Some("prompt"), PROMPT),
        (
            r#"{"model":"m","prompt":{"text":"a"}}"#,
            Some("prompt"),
            PROMPT,
        ),
        (
            r#"{"model":"m","prompt":"p","suffix":1}"#,
            Some("suffix"),
            "field `suffix` must be a string",
        ),
        (
            r#"{"model":"m","prompt":"p","max_tokens":-1}"#,
            Some("max_tokens"),
            MAX_TOKENS,
        ),
        (
            r#"{"model":"m","prompt":"p","max_tokens":"256"}"#,
            Some("max_tokens"),
            MAX_TOKENS,
        ),
        (
            r#"{"model":"m","prompt":"p","max_tokens":4294967296}"#,
            Some("max_tokens"),
            MAX_TOKENS,
        ),
        (
            r#"{"model":"m","prompt":"p","stop":["a",1]}"#,
            Some("stop"),
            STOP,
        ),
        (
            r#"{"model":"m","prompt":"p","stream":"yes"}"#,
            Some("stream"),
            "field `stream` must be a boolean",
        ),
        (
            r#"{"model":"m","prompt":"p","temperature":"hot"}"#,
            Some("temperature"),
            "field `temperature` must be a number",
        ),
        (
            r#"{"model":"m","prompt":"p","top_p":true}"#,
            Some("top_p"),
            "field `top_p` must be a number",
        ),
    ];
    for (body, field, message) in cases {
        let error = CompletionRequest::from_json(body.as_bytes()).err();
        let seen = error
            .as_ref()
            .map(|error| (error.field(), error.to_string()));
        assert_eq!(seen, Some((field, message.to_owned())), "{body}");
    }
}

#[test]
fn completion_request_defaults_and_helpers() {
    let parsed = CompletionRequest::from_json(
        br#"{"model":"m","prompt":"<fim_prefix>a<fim_suffix>b<fim_middle>","temperature":0.5}"#,
    )
    .expect("valid request");
    assert_eq!(parsed.max_output_tokens(), DEFAULT_MAX_TOKENS);
    assert_eq!(DEFAULT_MAX_TOKENS, 256);
    assert_eq!(
        parsed.sampling(),
        Sampling {
            temperature: Some(0.5),
            top_p: None
        }
    );
    assert_eq!(
        parsed.fim_prompt(),
        prompt("a", "b", Some(FimFormat::StarCoder))
    );
    let capped = CompletionRequest {
        max_tokens: Some(32),
        ..parsed
    };
    assert_eq!(capped.max_output_tokens(), 32);
}

fn upstream(
    text: &str,
    finish: FinishReason,
    prompt_tokens: u64,
    completion_tokens: u64,
) -> UpstreamCompletion {
    UpstreamCompletion {
        text: text.to_owned(),
        finish,
        usage: TokenUsage {
            prompt_tokens,
            completion_tokens,
        },
    }
}

#[test]
fn parse_responses_reply_reads_message_text() {
    use FinishReason::{Length, Stop};
    let cases = [
        (
            "reasoning skipped, parts joined",
            json!({"id":"resp_1","status":"completed","output":[
                {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"think"}]},
                {"type":"message","role":"assistant","content":[
                    {"type":"output_text","text":"a + ","annotations":[]},
                    {"type":"refusal","refusal":"no"},
                    {"type":"output_text","text":"b"}]},
                {"type":"message","content":null}],
                "usage":{"input_tokens":42,"output_tokens":3,"total_tokens":45,
                         "output_tokens_details":{"reasoning_tokens":10}}}),
            upstream("a + b", Stop, 42, 3),
        ),
        (
            "incomplete at max_output_tokens is length",
            json!({"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},
                   "output":[{"type":"message","content":[{"type":"output_text","text":"fn long("}]}],
                   "usage":{"input_tokens":5,"output_tokens":256}}),
            upstream("fn long(", Length, 5, 256),
        ),
        (
            "incomplete for another reason is stop",
            json!({"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}),
            upstream("", Stop, 0, 0),
        ),
        (
            "missing usage is zeros",
            json!({"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"x"}]}]}),
            upstream("x", Stop, 0, 0),
        ),
        (
            "partial usage",
            json!({"output":[],"usage":{"output_tokens":7}}),
            upstream("", Stop, 0, 7),
        ),
        (
            "top-level output_text when output is absent",
            json!({"status":"completed","output_text":"y","usage":{"input_tokens":1,"output_tokens":1}}),
            upstream("y", Stop, 1, 1),
        ),
        (
            "null output falls back to output_text",
            json!({"output":null,"output_text":"w"}),
            upstream("w", Stop, 0, 0),
        ),
        (
            "output wins over output_text",
            json!({"output":[{"type":"message","content":[{"type":"output_text","text":"z"}]}],"output_text":"ignored"}),
            upstream("z", Stop, 0, 0),
        ),
    ];
    for (name, body, expected) in cases {
        let parsed = parse_responses_reply(body.to_string().as_bytes());
        assert_eq!(parsed.ok(), Some(expected), "{name}");
    }
}

#[test]
fn parse_chat_reply_reads_the_first_choice() {
    use FinishReason::{Length, Stop};
    let cases = [
        (
            "plain",
            json!({"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"a + b"},
                   "finish_reason":"stop"}],"usage":{"prompt_tokens":42,"completion_tokens":3,"total_tokens":45}}),
            upstream("a + b", Stop, 42, 3),
        ),
        (
            "length",
            json!({"choices":[{"message":{"content":"fn long("},"finish_reason":"length"}],
                   "usage":{"prompt_tokens":5,"completion_tokens":256}}),
            upstream("fn long(", Length, 5, 256),
        ),
        (
            "null content, missing usage",
            json!({"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"stop"}]}),
            upstream("", Stop, 0, 0),
        ),
        (
            "other finish reasons are stop",
            json!({"choices":[{"message":{"content":"x","reasoning_content":"hmm"},"finish_reason":"tool_calls"},
                              {"message":{"content":"second"}}]}),
            upstream("x", Stop, 0, 0),
        ),
        (
            "missing finish reason and message",
            json!({"choices":[{}],"usage":{"prompt_tokens":9}}),
            upstream("", Stop, 9, 0),
        ),
    ];
    for (name, body, expected) in cases {
        let parsed = parse_chat_reply(body.to_string().as_bytes());
        assert_eq!(parsed.ok(), Some(expected), "{name}");
    }
}

#[test]
fn reply_parsers_reject_malformed_bodies() {
    type Parser = fn(&[u8]) -> Result<UpstreamCompletion, FimError>;
    let responses: Parser = parse_responses_reply;
    let chat: Parser = parse_chat_reply;
    let cases = [
        (responses, "<html>", "expected value at line 1 column 1"),
        (
            responses,
            r#"{"status":"completed"}"#,
            "neither `output` nor `output_text` is present",
        ),
        (
            responses,
            r#"{"output":"text"}"#,
            "`output` is not an array",
        ),
        (chat, "", "EOF while parsing a value at line 1 column 0"),
        (chat, r#"{"choices":[]}"#, "`choices` is missing or empty"),
        (
            chat,
            r#"{"object":"chat.completion"}"#,
            "`choices` is missing or empty",
        ),
        (
            chat,
            r#"{"choices":[{"message":{"content":[{"type":"text"}]}}]}"#,
            "`choices[0].message.content` is not a string",
        ),
    ];
    for (parse, body, detail) in cases {
        let message = parse(body.as_bytes()).err().map(|error| error.to_string());
        assert_eq!(
            message,
            Some(format!("upstream completion reply is malformed: {detail}")),
            "{body}"
        );
    }
}

/// Name, upstream text and finish, stops, expected text and finish.
type CleanupCase = (
    &'static str,
    &'static str,
    FinishReason,
    &'static [&'static str],
    &'static str,
    FinishReason,
);

#[test]
fn finish_completion_cleans_the_text() {
    use FinishReason::{Length, Stop};
    let cases: &[CleanupCase] = &[
        ("plain", "a + b", Stop, &[], "a + b", Stop),
        ("plain keeps length", "a + b", Length, &[], "a + b", Length),
        ("fence", "```\na + b\n```", Stop, &[], "a + b", Stop),
        (
            "fence with language",
            "```rust\nlet x = 1;\n    x + 1\n```\n",
            Stop,
            &[],
            "let x = 1;\n    x + 1",
            Stop,
        ),
        (
            "whitespace before fence",
            "\n  ```python\nreturn x\n```",
            Stop,
            &[],
            "return x",
            Stop,
        ),
        (
            "prose after fence",
            "```rust\nx + 1\n```\nThis adds one.",
            Stop,
            &[],
            "x + 1",
            Stop,
        ),
        (
            "crlf fence",
            "```rust\r\nx + 1\r\n```\r\n",
            Stop,
            &[],
            "x + 1",
            Stop,
        ),
        (
            "blank line kept in body",
            "```\na\n\n```",
            Stop,
            &[],
            "a\n",
            Stop,
        ),
        (
            "unclosed fence out of tokens",
            "```rust\nfn long(",
            Length,
            &[],
            "fn long(",
            Length,
        ),
        (
            "unclosed fence after a natural finish is text",
            "```\n/// let x = 1;\n/// ```",
            Stop,
            &[],
            "```\n/// let x = 1;\n/// ```",
            Stop,
        ),
        (
            "longer fence around a shorter one",
            "````md\n```rust\nx\n```\n````",
            Stop,
            &[],
            "```rust\nx\n```",
            Stop,
        ),
        (
            "backticks inside code",
            "let s = \"```\";\n```",
            Stop,
            &[],
            "let s = \"```\";\n```",
            Stop,
        ),
        (
            "inline triple backticks",
            "```a```\nb\n```",
            Stop,
            &[],
            "```a```\nb\n```",
            Stop,
        ),
        (
            "two backticks are not a fence",
            "``\nx\n``",
            Stop,
            &[],
            "``\nx\n``",
            Stop,
        ),
        ("fence line only", "```rust", Stop, &[], "```rust", Stop),
        (
            "earliest of several stops",
            "a + b\n}\n\nfn next() {}",
            Length,
            &["\n\n", "\n}", "fn"],
            "a + b",
            Stop,
        ),
        ("stop absent", "a + b", Length, &["\n\n"], "a + b", Length),
        (
            "empty stop ignored",
            "a + b",
            Stop,
            &["", "zzz"],
            "a + b",
            Stop,
        ),
        (
            "stop inside a fence",
            "```rust\na + b\n```",
            Stop,
            &["+"],
            "a ",
            Stop,
        ),
        (
            "fim marker",
            "a + b<|fim_middle|>junk",
            Length,
            &[],
            "a + b",
            Stop,
        ),
        ("deepseek marker", "a<｜fim▁end｜>b", Stop, &[], "a", Stop),
        ("codestral marker", "a[SUFFIX]b", Stop, &[], "a", Stop),
        ("code llama marker", "a <MID>b", Stop, &[], "a ", Stop),
        ("end of text", "a<|endoftext|>", Stop, &[], "a", Stop),
        (
            "marker before stop",
            "a<fim_suffix>b\n\nc",
            Stop,
            &["\n\n"],
            "a",
            Stop,
        ),
        ("cursor echoed", "<CURSOR>a + b", Stop, &[], "a + b", Stop),
        (
            "cursor echoed inside",
            "a + <CURSOR>b<CURSOR>",
            Stop,
            &[],
            "a + b",
            Stop,
        ),
    ];
    for &(name, text, finish, stops, expected_text, expected_finish) in cases {
        let choice = finish_completion(upstream(text, finish, 1, 1), &strings(stops));
        let expected = CompletionChoice {
            text: expected_text.to_owned(),
            finish_reason: expected_finish,
        };
        assert_eq!(choice, expected, "{name}");
    }
}

#[test]
fn responses_request_is_a_plain_fim_instruction() {
    let fim = prompt(
        "fn add(a: i32, b: i32) -> i32 {\n    ",
        "\n}",
        Some(FimFormat::Qwen),
    );
    let body = responses_request("grok-4.6", &fim, 256, Sampling::default());
    assert_eq!(
        body,
        json!({
            "model": "grok-4.6",
            "instructions": FIM_INSTRUCTIONS,
            "input": "fn add(a: i32, b: i32) -> i32 {\n    <CURSOR>\n}",
            "max_output_tokens": 256,
            "store": false,
            "stream": false,
        })
    );
    for key in [
        "tools",
        "search_parameters",
        "reasoning",
        "temperature",
        "top_p",
    ] {
        assert_eq!(body.get(key), None, "{key}");
    }
}

#[test]
fn upstream_requests_forward_sampling() {
    let fim = prompt("a", "b", None);
    let sampling = Sampling {
        temperature: Some(0.25),
        top_p: Some(0.5),
    };
    let body = responses_request("m", &fim, 8, sampling);
    assert_eq!(
        (body.get("temperature"), body.get("top_p")),
        (Some(&json!(0.25)), Some(&json!(0.5)))
    );
    let body = chat_request("m", &fim, 8, sampling);
    assert_eq!(
        (body.get("temperature"), body.get("top_p")),
        (Some(&json!(0.25)), Some(&json!(0.5)))
    );
}

#[test]
fn chat_request_frames_prefix_cursor_and_suffix() {
    let fim = prompt("let x = ", ";\n", None);
    assert_eq!(
        chat_request("grok-4.6", &fim, 64, Sampling::default()),
        json!({
            "model": "grok-4.6",
            "messages": [
                {"role": "system", "content": FIM_INSTRUCTIONS},
                {"role": "user", "content": "Fill in the code at <CURSOR> in this file:\n\nlet x = <CURSOR>;\n"},
            ],
            "max_completion_tokens": 64,
            "stream": false,
        })
    );
}

#[test]
fn instructions_name_the_cursor_marker() {
    assert!(FIM_INSTRUCTIONS.contains(CURSOR_MARKER));
    assert!(FIM_INSTRUCTIONS.contains("no markdown code fences"));
}

#[test]
fn text_completion_json_has_every_field_zed_requires() {
    let choice = CompletionChoice {
        text: "a + b".to_owned(),
        finish_reason: FinishReason::Length,
    };
    let usage = TokenUsage {
        prompt_tokens: 42,
        completion_tokens: 3,
    };
    assert_eq!(
        text_completion_json("cmpl-7f3a", 1_750_000_000, "supergrok", &choice, usage),
        json!({
            "id": "cmpl-7f3a",
            "object": "text_completion",
            "created": 1_750_000_000,
            "model": "supergrok",
            "choices": [{"index": 0, "text": "a + b", "finish_reason": "length", "logprobs": null}],
            "usage": {"prompt_tokens": 42, "completion_tokens": 3, "total_tokens": 45},
        })
    );
    assert_eq!(FinishReason::Stop.as_str(), "stop");
}

/// The whole pure pipeline, glued as the gateway does.
#[test]
fn zed_request_round_trip() {
    let body = br#"{"model":"supergrok","prompt":"<|fim_prefix|>fn add(a: i32, b: i32) -> i32 {\n    <|fim_suffix|>\n}<|fim_middle|>","max_tokens":256,"stop":["<|endoftext|>","<|fim_prefix|>","<|fim_middle|>","<|fim_suffix|>"]}"#;
    let request = CompletionRequest::from_json(body).expect("zed request parses");
    let upstream_body = responses_request(
        "grok-4.6",
        &request.fim_prompt(),
        request.max_output_tokens(),
        request.sampling(),
    );
    assert_eq!(
        upstream_body.get("input"),
        Some(&json!("fn add(a: i32, b: i32) -> i32 {\n    <CURSOR>\n}"))
    );
    let reply = json!({"status":"completed","output":[{"type":"message","content":[
        {"type":"output_text","text":"```rust\na + b\n```"}]}],
        "usage":{"input_tokens":42,"output_tokens":3}});
    let upstream = parse_responses_reply(reply.to_string().as_bytes()).expect("reply parses");
    let usage = upstream.usage;
    let choice = finish_completion(upstream, &request.stop);
    let answer: Value = text_completion_json("cmpl-1", 7, &request.model, &choice, usage);
    assert_eq!(
        answer,
        json!({"id":"cmpl-1","object":"text_completion","created":7,"model":"supergrok",
               "choices":[{"index":0,"text":"a + b","finish_reason":"stop","logprobs":null}],
               "usage":{"prompt_tokens":42,"completion_tokens":3,"total_tokens":45}})
    );
}
