use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn result(value: serde_json::Value) -> CallToolResult {
    serde_json::from_value(value).unwrap()
}

#[test]
fn text_image_and_resources_map_into_one_result() {
    let output = map_result(result(json!({
        "content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///c.md", "name": "c.md", "description": "notes"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
        ]
    })));
    assert_eq!(
        output,
        McpOutput {
            text: [
                "first",
                "[image 1: image/png, 8 bytes]",
                "[resource file:///a.txt]\ninside",
                "[resource file:///b.bin: application/octet-stream, 3 bytes; binary, not passed on]",
                "[resource link: file:///c.md (c.md) — notes]",
                "[audio: audio/wav, 3 bytes; not passed on]",
            ]
            .join("\n"),
            images: vec![McpImage {
                media_type: "image/png".to_owned(),
                data: "iVBORw0KGgo=".to_owned(),
            }],
            is_error: false,
        }
    );
}

#[test]
fn errors_and_empty_results_say_so() {
    let output = map_result(result(json!({
        "content": [{"type": "text", "text": "no such file"}],
        "isError": true
    })));
    assert!(output.is_error);
    assert_eq!(output.text, "no such file");
    let output = map_result(result(json!({"content": [], "isError": true})));
    assert_eq!(output.text, "(the tool failed without saying why)");
    let output = map_result(result(
        json!({"content": [], "structuredContent": {"sum": 3}}),
    ));
    assert_eq!(output.text, "{\n  \"sum\": 3\n}");
}

#[test]
fn huge_text_keeps_its_head_and_tail() {
    let text = format!("HEAD{}TAIL", "é".repeat(200_000));
    let output = map_result(result(json!({"content": [{"type": "text", "text": text}]})));
    assert!(output.text.len() <= MAX_TEXT + 200, "{}", output.text.len());
    assert!(output.text.starts_with("HEAD"));
    assert!(output.text.ends_with("TAIL"));
    assert!(output.text.contains("of the tool's output left out"));
}
