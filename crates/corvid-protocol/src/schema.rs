//! The JSON Schema of the wire frames, generated from the types.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::envelope::{Event, PROTOCOL_VERSION};
use crate::reply::ServerFrame;
use crate::request::ClientFrame;

/// The JSON Schema (draft 2020-12) of a frame: a [`ClientFrame`] (face → engine: a submission
/// or a response) or a [`ServerFrame`] (engine → face: the hello, an event, a request, a reply),
/// with every type they use under `$defs` (`#/$defs/ClientFrame`, `#/$defs/ServerFrame` and
/// `#/$defs/Event` validate one direction each; an event on a stream of events alone validates
/// against `Event`).
///
/// Pretty-printed, with object keys sorted so the text does not depend on how `serde_json` was
/// built, and ending with a newline: it is checked in as `schema/protocol.schema.json` and
/// compared by a test.
pub fn schema_json() -> String {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let client = generator.subschema_for::<ClientFrame>();
    let server = generator.subschema_for::<ServerFrame>();
    // Listed under `$defs` by name, for streams that carry events alone (`corvid exec --json`).
    let _event = generator.subschema_for::<Event>();
    let definitions = generator.take_definitions(/*apply_transforms*/ true);
    let document = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "corvid agent protocol",
        "description": format!(
            "Version {PROTOCOL_VERSION}. A frame is one JSON object: a ClientFrame (front end to \
             engine: submission or response) or a ServerFrame (engine to front end: protocol, \
             event, request or reply), one per line on a byte stream or one per WebSocket text \
             message."
        ),
        "x-protocol-version": PROTOCOL_VERSION,
        "anyOf": [client, server],
        "$defs": definitions,
    });
    let mut text = format!("{:#}", sorted(document));
    text.push('\n');
    text
}

/// `value` with every object's keys in sorted order, whether or not `serde_json`'s
/// `preserve_order` feature is on somewhere in the build.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut entries: Vec<(String, Value)> = object.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| (key, sorted(value)))
                    .collect::<Map<String, Value>>(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}
