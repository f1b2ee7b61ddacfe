//! What an MCP tool returned, turned into what the agent gives the model: text, the images
//! (which a tool result in corvid-wire's canonical model can carry), and whether it failed.
//!
//! Text blocks are joined; an embedded text resource is shown with its URI; a binary resource,
//! audio, or a resource link becomes one line saying what it was, so the model knows something
//! came back even where the bytes cannot follow. Each image also leaves a line in the text, so a
//! front end or a provider that drops images still tells the model an image was there.
//! Structured content is shown as JSON when the server sent no content blocks. Text past
//! [`MAX_TEXT`] keeps its head and tail with a note of what was cut.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The most text of one result given to the model, in bytes.
pub const MAX_TEXT: usize = 64 * 1024;

/// One MCP tool result, ready for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpOutput {
    /// What the model reads.
    pub text: String,
    /// Images the tool returned, in order.
    pub images: Vec<McpImage>,
    /// The server marked the result as an error (`isError`).
    pub is_error: bool,
}

/// An image a tool returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpImage {
    /// `image/png`, …
    pub media_type: String,
    /// The bytes, base64 as the server sent them.
    pub data: String,
}

/// Maps a `tools/call` result.
pub fn map_result(result: CallToolResult) -> McpOutput {
    let mut parts: Vec<String> = Vec::new();
    let mut images = Vec::new();
    for block in result.content {
        match block {
            ContentBlock::Text(text) => parts.push(text.text),
            ContentBlock::Image(image) => {
                images.push(McpImage {
                    media_type: image.mime_type.clone(),
                    data: image.data.clone(),
                });
                parts.push(format!(
                    "[image {}: {}, {}]",
                    images.len(),
                    image.mime_type,
                    size(decoded_len(&image.data))
                ));
            }
            ContentBlock::Audio(audio) => parts.push(format!(
                "[audio: {}, {}; not passed on]",
                audio.mime_type,
                size(decoded_len(&audio.data))
            )),
            ContentBlock::Resource(embedded) => parts.push(resource(&embedded.resource)),
            ContentBlock::ResourceLink(link) => {
                let mut line = format!("[resource link: {} ({})", link.uri, link.name);
                if let Some(description) = &link.description {
                    line.push_str(&format!(" — {description}"));
                }
                line.push(']');
                parts.push(line);
            }
            other => parts.push(format!(
                "[content of a kind corvid does not know: {}]",
                serde_json::to_string(&other).unwrap_or_default()
            )),
        }
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    let is_error = result.is_error.unwrap_or(false);
    if parts.is_empty() {
        parts.push(if is_error {
            "(the tool failed without saying why)".to_owned()
        } else {
            "(the tool returned nothing)".to_owned()
        });
    }
    McpOutput {
        text: cap(parts.join("\n")),
        images,
        is_error,
    }
}

fn resource(contents: &ResourceContents) -> String {
    match contents {
        ResourceContents::TextResourceContents { uri, text, .. } => {
            format!("[resource {uri}]\n{text}")
        }
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => format!(
            "[resource {uri}: {}, {}; binary, not passed on]",
            mime_type.as_deref().unwrap_or("application/octet-stream"),
            size(decoded_len(blob))
        ),
        #[allow(unreachable_patterns)]
        other => format!(
            "[resource: {}]",
            serde_json::to_string(other).unwrap_or_default()
        ),
    }
}

/// Bytes behind base64 text (padding and whitespace aside), without decoding it.
fn decoded_len(base64: &str) -> usize {
    let significant = base64
        .bytes()
        .filter(|byte| !byte.is_ascii_whitespace() && *byte != b'=')
        .count();
    significant * 3 / 4
}

fn size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// `text` within [`MAX_TEXT`]: three quarters head, a quarter tail, and a note between.
fn cap(text: String) -> String {
    if text.len() <= MAX_TEXT {
        return text;
    }
    let head_end = floor_boundary(&text, MAX_TEXT * 3 / 4);
    let tail_start = ceil_boundary(&text, text.len() - MAX_TEXT / 4);
    format!(
        "{}\n\n[… {} of the tool's output left out; the result was {} …]\n\n{}",
        &text[..head_end],
        size(tail_start - head_end),
        size(text.len()),
        &text[tail_start..]
    )
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests;
