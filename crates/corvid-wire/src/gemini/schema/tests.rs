use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[test]
fn type_arrays_become_nullable_or_any_of() {
    assert_eq!(
        to_gemini(&json!({"type": ["string", "null"], "description": "d"})),
        json!({"type": "string", "nullable": true, "description": "d"})
    );
    assert_eq!(
        to_gemini(&json!({"type": ["string", "integer"]})),
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    );
    assert_eq!(
        to_gemini(&json!({"type": "null"})),
        json!({"nullable": true})
    );
}

#[test]
fn any_of_with_null_collapses_and_one_of_is_any_of() {
    assert_eq!(
        to_gemini(
            &json!({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
            "description": "count"})
        ),
        json!({"type": "integer", "minimum": 1, "nullable": true, "description": "count"})
    );
    assert_eq!(
        to_gemini(
            &json!({"oneOf": [{"type": "string"}, {"type": "number", "exclusiveMinimum": 0}]})
        ),
        json!({"anyOf": [{"type": "string"}, {"type": "number"}]})
    );
}

#[test]
fn enums_are_strings_only() {
    assert_eq!(
        to_gemini(&json!({"enum": ["a", "b", null]})),
        json!({"type": "string", "enum": ["a", "b"], "nullable": true})
    );
    assert_eq!(
        to_gemini(&json!({"type": "integer", "enum": [1, 2, 3], "description": "Level."})),
        json!({"type": "integer", "description": "Level. Allowed values: 1, 2, 3."})
    );
    assert_eq!(
        to_gemini(&json!({"enum": ["auto", 0]})),
        json!({"description": "Allowed values: \"auto\", 0."})
    );
    assert_eq!(
        to_gemini(&json!({"const": "fixed"})),
        json!({"type": "string", "enum": ["fixed"]})
    );
}

#[test]
fn formats_gemini_does_not_know_are_dropped() {
    assert_eq!(
        to_gemini(&json!({"type": "object", "properties": {
            "when": {"type": "string", "format": "date-time"},
            "site": {"type": "string", "format": "uri"},
            "n": {"type": "integer", "format": "int64"},
            "x": {"type": "number", "format": "int32"}
        }})),
        json!({"type": "object", "properties": {
            "when": {"type": "string", "format": "date-time"},
            "site": {"type": "string"},
            "n": {"type": "integer", "format": "int64"},
            "x": {"type": "number"}
        }})
    );
}

#[test]
fn refs_are_inlined_and_recursion_is_bounded() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
            "Alias": {"$ref": "#/$defs/Point"},
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}
        },
        "properties": {
            "at": {"$ref": "#/$defs/Alias", "description": "Where"},
            "list": {"$ref": "#/$defs/Node"}
        }
    });
    let gemini = to_gemini(&schema);
    assert_eq!(
        gemini["properties"]["at"],
        json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"],
            "description": "Where"})
    );
    // Node → next → next … ends after MAX_REFS levels, in an unconstrained value.
    let mut node = &gemini["properties"]["list"];
    let mut depth = 0;
    while let Some(next) = node.get("properties").and_then(|p| p.get("next")) {
        node = next;
        depth += 1;
    }
    assert_eq!(depth, MAX_REFS);
    assert_eq!(node, &json!({}));
}

#[test]
fn all_of_is_merged() {
    assert_eq!(
        to_gemini(&json!({"allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "boolean"}}, "required": ["b"]}
        ]})),
        json!({"type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}},
            "required": ["a", "b"]})
    );
}

#[test]
fn required_names_only_declared_properties() {
    assert_eq!(
        to_gemini(
            &json!({"type": "object", "properties": {"a": {"type": "string"}},
            "required": ["a", "ghost"]})
        ),
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    );
}

#[test]
fn nested_free_form_objects_lose_their_type() {
    assert_eq!(
        to_gemini(&json!({"type": "object", "properties": {
            "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Vars"},
            "tags": {"type": "array", "items": {"type": "object", "properties": {}}}
        }})),
        json!({"type": "object", "properties": {
            "env": {"description": "Vars"},
            "tags": {"type": "array", "items": {}}
        }})
    );
}

#[test]
fn parameters_without_properties_are_left_out() {
    assert_eq!(
        parameters_to_gemini(&json!({"type": "object", "properties": {}})),
        None
    );
    assert_eq!(parameters_to_gemini(&json!({"type": "object"})), None);
    assert_eq!(parameters_to_gemini(&json!({})), None);
    assert_eq!(
        parameters_to_gemini(&json!({"properties": {"a": {"type": "string"}}})),
        Some(json!({"type": "object", "properties": {"a": {"type": "string"}}})),
        "the root is typed OBJECT"
    );
}

#[test]
fn gemini_schemas_read_back_as_json_schema() {
    assert_eq!(
        from_gemini(&json!({"type": "OBJECT", "properties": {
            "a": {"type": "STRING", "nullable": true},
            "b": {"type": "ARRAY", "items": {"type": "INTEGER"}},
            "c": {"anyOf": [{"type": "NUMBER"}, {"type": "BOOLEAN"}], "nullable": true}
        }, "required": ["a"], "propertyOrdering": ["a", "b", "c"]})),
        json!({"type": "object", "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"type": "array", "items": {"type": "integer"}},
            "c": {"anyOf": [{"type": "number"}, {"type": "boolean"}], "nullable": true}
        }, "required": ["a"], "propertyOrdering": ["a", "b", "c"]})
    );
}
