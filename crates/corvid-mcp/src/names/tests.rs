use pretty_assertions::assert_eq;

use super::*;

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(server, tool)| ((*server).to_owned(), (*tool).to_owned()))
        .collect()
}

fn valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

#[test]
fn plain_names_are_kept_and_map_back() {
    let naming = assign(
        &pairs(&[("everything", "echo"), ("everything", "get-sum")]),
        100,
        &|_| false,
    );
    let names: Vec<&str> = naming.offered.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["mcp__everything__echo", "mcp__everything__get-sum"]
    );
    let back = naming.resolve("mcp__everything__get-sum").unwrap();
    assert_eq!(
        (back.server.as_str(), back.tool.as_str()),
        ("everything", "get-sum")
    );
    assert!(naming.resolve("mcp__everything__nothing").is_none());
}

#[test]
fn every_name_fits_every_provider_and_maps_back_exactly() {
    let long = "a".repeat(80);
    let tools = pairs(&[
        ("my server", "read.file"),
        ("my_server", "read_file"),
        ("ünï", "tool/with:odd chars"),
        ("s", long.as_str()),
        ("a__b", "c"),
        ("a", "b__c"),
    ]);
    let naming = assign(&tools, 100, &|_| false);
    assert_eq!(naming.offered.len(), tools.len());
    assert!(naming.left_out.is_empty());
    let mut seen = HashSet::new();
    for (tool, (server, raw)) in naming.offered.iter().zip(&tools) {
        assert!(valid(&tool.name), "{}", tool.name);
        assert!(seen.insert(tool.name.clone()), "duplicate {}", tool.name);
        let back = naming.resolve(&tool.name).unwrap();
        assert_eq!((&back.server, &back.tool), (server, raw));
    }
    // Stable from turn to turn.
    assert_eq!(assign(&tools, 100, &|_| false), naming);
}

#[test]
fn built_ins_win_a_clash() {
    let naming = assign(&pairs(&[("x", "y")]), 100, &|name| name == "mcp__x__y");
    let name = &naming.offered[0].name;
    assert_ne!(name, "mcp__x__y");
    assert!(name.starts_with("mcp__x__y_") && valid(name), "{name}");
}

#[test]
fn the_cap_leaves_the_rest_out_and_says_which() {
    let naming = assign(
        &pairs(&[("a", "1"), ("a", "2"), ("a", "2"), ("b", "3"), ("b", "4")]),
        2,
        &|_| false,
    );
    assert_eq!(naming.offered.len(), 2);
    assert_eq!(naming.left_out, pairs(&[("b", "3"), ("b", "4")]));
}
