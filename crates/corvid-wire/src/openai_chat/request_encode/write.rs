//! The Chat body's `messages` and `tools` written as JSON text by hand, strings through
//! [`json_text::write_str`]: the same bytes serde's derived serialisers write (the tests hold
//! the two together), with the strings — most of a request — copied in runs instead of byte
//! by byte.

use crate::json_text::{write_key, write_str};

use super::{CallOut, Content, FunctionOut, ImageUrl, MessageOut, ToolOut, UserPart};

/// `[a,b,…]`, each item written by `write`.
pub(super) fn array<T>(out: &mut Vec<u8>, items: &[T], write: impl Fn(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write(out, item);
    }
    out.push(b']');
}

pub(super) fn message(out: &mut Vec<u8>, message: &MessageOut<'_>) {
    out.push(b'{');
    write_key(out, "role");
    write_str(out, message.role);
    if let Some(id) = message.tool_call_id {
        out.push(b',');
        write_key(out, "tool_call_id");
        write_str(out, id);
    }
    out.push(b',');
    write_key(out, "content");
    match &message.content {
        Content::Null => out.extend_from_slice(b"null"),
        Content::Text(text) => write_str(out, text),
        Content::Parts(parts) => array(out, parts, user_part),
    }
    if let Some(reasoning) = &message.reasoning_content {
        out.push(b',');
        write_key(out, "reasoning_content");
        write_str(out, reasoning);
    }
    if !message.tool_calls.is_empty() {
        out.push(b',');
        write_key(out, "tool_calls");
        array(out, &message.tool_calls, call);
    }
    out.push(b'}');
}

fn user_part(out: &mut Vec<u8>, part: &UserPart<'_>) {
    match part {
        UserPart::Text { text } => {
            out.extend_from_slice(br#"{"type":"text","text":"#);
            write_str(out, text);
        }
        UserPart::ImageUrl { image_url } => {
            out.extend_from_slice(br#"{"type":"image_url","image_url":"#);
            image(out, image_url);
        }
    }
    out.push(b'}');
}

fn image(out: &mut Vec<u8>, image: &ImageUrl<'_>) {
    out.push(b'{');
    write_key(out, "url");
    write_str(out, &image.url);
    if let Some(detail) = image.detail {
        out.push(b',');
        write_key(out, "detail");
        write_str(out, detail);
    }
    out.push(b'}');
}

fn call(out: &mut Vec<u8>, call: &CallOut<'_>) {
    out.push(b'{');
    write_key(out, "id");
    write_str(out, call.id);
    out.push(b',');
    write_key(out, "type");
    write_str(out, call.kind);
    out.extend_from_slice(br#","function":{"name":"#);
    write_str(out, &call.function.name);
    out.push(b',');
    write_key(out, "arguments");
    write_str(out, call.function.arguments);
    out.extend_from_slice(b"}}");
}

pub(super) fn tool(out: &mut Vec<u8>, tool: &ToolOut<'_>) {
    out.push(b'{');
    write_key(out, "type");
    write_str(out, tool.kind);
    out.extend_from_slice(br#","function":"#);
    function(out, &tool.function);
    out.push(b'}');
}

fn function(out: &mut Vec<u8>, function: &FunctionOut<'_>) {
    out.push(b'{');
    write_key(out, "name");
    write_str(out, &function.name);
    if let Some(description) = function.description {
        out.push(b',');
        write_key(out, "description");
        write_str(out, description);
    }
    out.push(b',');
    write_key(out, "parameters");
    out.extend_from_slice(function.parameters.get().as_bytes());
    if let Some(strict) = function.strict {
        out.push(b',');
        write_key(out, "strict");
        out.extend_from_slice(if strict { b"true" } else { b"false" });
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests;
