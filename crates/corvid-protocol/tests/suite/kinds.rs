//! The version guard: every kind in the schema (a tagged union's `"type"` value, a string
//! enum's value) is listed in `kinds.txt` under the current `PROTOCOL_VERSION`, and each
//! version's list differs from the one before. Peers refuse unknown kinds, so adding one
//! without a bump would let two builds that both say "version N" misread each other.

use std::collections::BTreeSet;

use corvid_protocol::{PROTOCOL_VERSION, schema_json};
use serde_json::Value;

const KINDS: &str = include_str!("kinds.txt");

/// The `[version N]` sections of `kinds.txt`, in file order.
fn sections() -> Vec<(u32, BTreeSet<String>)> {
    let mut sections: Vec<(u32, BTreeSet<String>)> = Vec::new();
    for line in KINDS.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(version) = line
            .strip_prefix("[version ")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            sections.push((version.parse().unwrap(), BTreeSet::new()));
        } else {
            sections.last_mut().unwrap().1.insert(line.to_owned());
        }
    }
    sections
}

/// Every kind the schema defines.
fn schema_kinds() -> BTreeSet<String> {
    let schema: Value = serde_json::from_str(&schema_json()).unwrap();
    let mut kinds = BTreeSet::new();
    for (name, definition) in schema["$defs"].as_object().unwrap() {
        collect_tags(definition, name, &mut kinds);
        let alternatives = definition["oneOf"].as_array().into_iter().flatten();
        for value in std::iter::once(definition).chain(alternatives) {
            if let Some(constant) = value["const"].as_str() {
                kinds.insert(format!("{name}={constant}"));
            }
            for constant in value["enum"].as_array().into_iter().flatten() {
                if let Some(constant) = constant.as_str() {
                    kinds.insert(format!("{name}={constant}"));
                }
            }
        }
    }
    kinds
}

fn collect_tags(node: &Value, owner: &str, kinds: &mut BTreeSet<String>) {
    match node {
        Value::Object(object) => {
            let tag = &node["properties"]["type"];
            if let Some(constant) = tag["const"].as_str() {
                kinds.insert(format!("{owner}.{constant}"));
            }
            for constant in tag["enum"].as_array().into_iter().flatten() {
                if let Some(constant) = constant.as_str() {
                    kinds.insert(format!("{owner}.{constant}"));
                }
            }
            for value in object.values() {
                collect_tags(value, owner, kinds);
            }
        }
        Value::Array(values) => {
            for value in values {
                collect_tags(value, owner, kinds);
            }
        }
        _ => {}
    }
}

#[test]
fn the_current_version_lists_exactly_the_schemas_kinds() {
    let sections = sections();
    let (version, listed) = sections.last().unwrap();
    assert_eq!(
        *version, PROTOCOL_VERSION,
        "kinds.txt's last section must be the current PROTOCOL_VERSION"
    );
    let defined = schema_kinds();
    let added: Vec<_> = defined.difference(listed).collect();
    let removed: Vec<_> = listed.difference(&defined).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the protocol's kinds changed (added {added:?}, removed {removed:?}): bump \
         PROTOCOL_VERSION and add a `[version N]` section to tests/suite/kinds.txt"
    );
}

#[test]
fn each_version_changes_the_kinds_of_the_one_before() {
    let sections = sections();
    for pair in sections.windows(2) {
        let ((before, old), (after, new)) = (&pair[0], &pair[1]);
        assert_eq!(*after, before + 1, "versions go up by one");
        assert_ne!(old, new, "version {after} lists the same kinds as {before}");
    }
}

#[test]
fn the_origin_rule_came_with_version_3() {
    let sections = sections();
    let first_with_origin = sections
        .iter()
        .find(|(_, kinds)| kinds.contains("ApprovalRule.origin"))
        .map(|(version, _)| *version);
    assert_eq!(first_with_origin, Some(3));
}
