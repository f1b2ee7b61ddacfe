//! JSON Schema ↔ Gemini's OpenAPI-subset `Schema` (§6.3, pitfall 15).
//!
//! Gemini's `parameters` and `responseSchema` refuse every keyword outside a small allow-list
//! (`Unknown name "additionalProperties"…`), type arrays, `$ref`, `const` and non-string enums.
//! [`to_gemini`] rewrites a JSON Schema into that subset, keeping its meaning where the subset
//! can express it; [`from_gemini`] turns Gemini's dialect (upper-case types, `nullable`) back
//! into plain JSON Schema.

use serde_json::{Map, Value, json};

/// The keywords Gemini's `Schema` accepts.
const ALLOWED: [&str; 22] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// How many `$ref`s one path through the schema may follow: a recursive schema ends in an
/// unconstrained value there.
const MAX_REFS: usize = 8;

/// A tool's JSON Schema as Gemini `parameters`, or `None` when the tool takes no arguments
/// (Gemini refuses an object schema with empty `properties`).
pub(crate) fn parameters_to_gemini(schema: &Value) -> Option<Value> {
    let mut sanitized = to_gemini(schema);
    let object = sanitized.as_object_mut()?;
    let has_properties = object
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    if !has_properties {
        return None;
    }
    // Vertex requires the root to be typed OBJECT.
    object.insert("type".into(), "object".into());
    Some(sanitized)
}

/// A JSON Schema rewritten into Gemini's subset.
pub(crate) fn to_gemini(schema: &Value) -> Value {
    let mut defs = Map::new();
    for key in ["definitions", "$defs"] {
        if let Some(Value::Object(map)) = schema.get(key) {
            defs.extend(map.iter().map(|(name, def)| (name.clone(), def.clone())));
        }
    }
    let mut out = sanitize(schema, &defs, 0);
    strip_empty_objects(&mut out, /*root*/ true);
    out
}

/// `refs` counts the `$ref`s followed on the way here.
fn sanitize(schema: &Value, defs: &Map<String, Value>, refs: usize) -> Value {
    let Value::Object(source) = schema else {
        // `true`, `false` or garbage: any value.
        return json!({});
    };
    let refs = refs + usize::from(source.contains_key("$ref"));
    if refs > MAX_REFS {
        return json!({});
    }
    let source = flatten(source, defs);
    let mut out = Map::new();
    let mut nullable = source.get("nullable") == Some(&Value::Bool(true));
    let mut any_of: Vec<Value> = Vec::new();

    match source.get("type") {
        Some(Value::String(kind)) if kind == "null" => nullable = true,
        Some(Value::String(kind)) => {
            out.insert("type".into(), kind.to_ascii_lowercase().into());
        }
        Some(Value::Array(kinds)) => {
            let named: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
            let real: Vec<&str> = named.iter().copied().filter(|k| *k != "null").collect();
            nullable |= real.len() < named.len();
            match real.as_slice() {
                [] => {}
                [kind] => {
                    out.insert("type".into(), kind.to_ascii_lowercase().into());
                }
                kinds => any_of.extend(kinds.iter().map(|kind| json!({ "type": kind }))),
            }
        }
        _ => {}
    }

    if let Some(Value::Array(options)) = source.get("anyOf") {
        any_of.clear();
        for option in options {
            if is_null_schema(option) {
                nullable = true;
            } else {
                any_of.push(sanitize(option, defs, refs));
            }
        }
    }

    for (key, value) in &source {
        if !ALLOWED.contains(&key.as_str()) {
            continue;
        }
        match key.as_str() {
            "type" | "anyOf" | "nullable" | "enum" | "format" => {}
            "properties" => {
                let Value::Object(properties) = value else {
                    continue;
                };
                let properties: Map<String, Value> = properties
                    .iter()
                    .map(|(name, property)| (name.clone(), sanitize(property, defs, refs)))
                    .collect();
                out.insert(key.clone(), Value::Object(properties));
            }
            "items" => {
                // A tuple (`items: [...]`) keeps its first form.
                let item = match value {
                    Value::Array(items) => items.first().cloned().unwrap_or(json!({})),
                    item => item.clone(),
                };
                out.insert(key.clone(), sanitize(&item, defs, refs));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }

    if let Some(Value::Array(values)) = source.get("enum") {
        apply_enum(&mut out, values, &mut nullable);
    }
    if let Some(Value::String(format)) = source.get("format") {
        let kind = out.get("type").and_then(Value::as_str).unwrap_or("");
        let supported = match kind {
            "string" => matches!(format.as_str(), "enum" | "date-time"),
            "integer" => matches!(format.as_str(), "int32" | "int64"),
            "number" => matches!(format.as_str(), "float" | "double"),
            _ => false,
        };
        if supported {
            out.insert("format".into(), format.clone().into());
        }
    }
    // `required` may only name declared properties.
    if let Some(Value::Array(required)) = out.get("required") {
        let declared = out.get("properties").and_then(Value::as_object);
        let kept: Vec<Value> = required
            .iter()
            .filter(|name| {
                name.as_str()
                    .is_some_and(|name| declared.is_some_and(|props| props.contains_key(name)))
            })
            .cloned()
            .collect();
        if kept.is_empty() {
            out.remove("required");
        } else {
            out.insert("required".into(), kept.into());
        }
    }

    match any_of.len() {
        0 => {}
        1 => {
            // One alternative left: it is the schema; the outer keywords win.
            if let Some(Value::Object(only)) = any_of.pop() {
                for (key, value) in only {
                    out.entry(key).or_insert(value);
                }
            }
        }
        _ => {
            out.insert("anyOf".into(), any_of.into());
        }
    }
    if nullable {
        out.insert("nullable".into(), true.into());
    }
    Value::Object(out)
}

/// Resolves a local `$ref` (its siblings override the target) and merges `allOf`; `oneOf`
/// becomes `anyOf`, `const` a one-value `enum`.
fn flatten(source: &Map<String, Value>, defs: &Map<String, Value>) -> Map<String, Value> {
    let mut source = resolve_ref(source, defs);
    if let Some(Value::Array(parts)) = source.remove("allOf") {
        for part in parts {
            let Value::Object(part) = part else { continue };
            for (key, value) in resolve_ref(&part, defs) {
                match (key.as_str(), source.get_mut(&key), value) {
                    ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                        for (name, property) in theirs {
                            mine.entry(name).or_insert(property);
                        }
                    }
                    ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                        for name in theirs {
                            if !mine.contains(&name) {
                                mine.push(name);
                            }
                        }
                    }
                    (_, Some(_), _) => {}
                    (_, None, value) => {
                        source.insert(key, value);
                    }
                }
            }
        }
    }
    if let Some(one_of) = source.remove("oneOf") {
        source.entry("anyOf").or_insert(one_of);
    }
    if let Some(constant) = source.remove("const") {
        source.entry("enum").or_insert(json!([constant]));
    }
    source
}

fn resolve_ref(source: &Map<String, Value>, defs: &Map<String, Value>) -> Map<String, Value> {
    let mut current = source.clone();
    // A chain of `$ref`s (or a cycle of them) is followed a bounded number of times.
    for _ in 0..MAX_REFS {
        let target = current
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| {
                reference
                    .strip_prefix("#/$defs/")
                    .or_else(|| reference.strip_prefix("#/definitions/"))
            })
            .and_then(|name| defs.get(name))
            .and_then(Value::as_object);
        let Some(target) = target else { break };
        let mut resolved = target.clone();
        for (key, value) in current {
            if key != "$ref" {
                resolved.insert(key, value);
            }
        }
        current = resolved;
    }
    current.remove("$ref");
    current
}

/// Gemini enums are strings only. String values stay (typing the schema `string`); `null`
/// makes it nullable; an enum with other values is dropped and described instead, so the
/// model still knows them and the argument keeps its type.
fn apply_enum(out: &mut Map<String, Value>, values: &[Value], nullable: &mut bool) {
    let mut strings = Vec::new();
    let mut others = Vec::new();
    for value in values {
        match value {
            Value::String(text) => strings.push(Value::String(text.clone())),
            Value::Null => *nullable = true,
            other => others.push(other.to_string()),
        }
    }
    if others.is_empty() && !strings.is_empty() {
        out.insert("type".into(), "string".into());
        out.insert("enum".into(), strings.into());
        return;
    }
    let listed: Vec<String> = values
        .iter()
        .filter(|value| !value.is_null())
        .map(Value::to_string)
        .collect();
    if listed.is_empty() {
        return;
    }
    let note = format!("Allowed values: {}.", listed.join(", "));
    let description = match out.get("description").and_then(Value::as_str) {
        Some(text) if !text.is_empty() => format!("{text} {note}"),
        _ => note,
    };
    out.insert("description".into(), description.into());
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// Gemini refuses an OBJECT schema whose `properties` is empty: nested free-form objects
/// lose their type (any value), and the root is left to [`parameters_to_gemini`].
fn strip_empty_objects(schema: &mut Value, root: bool) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for property in properties.values_mut() {
            strip_empty_objects(property, false);
        }
    }
    if let Some(items) = map.get_mut("items") {
        strip_empty_objects(items, false);
    }
    if let Some(Value::Array(options)) = map.get_mut("anyOf") {
        for option in options {
            strip_empty_objects(option, false);
        }
    }
    let empty = map
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    if !root && empty && map.get("type").and_then(Value::as_str) == Some("object") {
        map.remove("type");
        map.remove("properties");
        map.remove("required");
    }
}

/// A Gemini `Schema` as JSON Schema: types lower-cased, `nullable` folded into the type.
pub(crate) fn from_gemini(schema: &Value) -> Value {
    match schema {
        Value::Object(source) => {
            let mut out = Map::new();
            for (key, value) in source {
                let value = match key.as_str() {
                    "type" => match value {
                        Value::String(kind) => Value::String(kind.to_ascii_lowercase()),
                        other => other.clone(),
                    },
                    "properties" => match value {
                        Value::Object(properties) => Value::Object(
                            properties
                                .iter()
                                .map(|(name, property)| (name.clone(), from_gemini(property)))
                                .collect(),
                        ),
                        other => other.clone(),
                    },
                    "items" => from_gemini(value),
                    "anyOf" => match value {
                        Value::Array(options) => options.iter().map(from_gemini).collect(),
                        other => other.clone(),
                    },
                    "nullable" => continue,
                    _ => value.clone(),
                };
                out.insert(key.clone(), value);
            }
            if source.get("nullable") == Some(&Value::Bool(true)) {
                match out.get("type").cloned() {
                    Some(Value::String(kind)) => {
                        out.insert("type".into(), json!([kind, "null"]));
                    }
                    _ => {
                        out.insert("nullable".into(), true.into());
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests;
