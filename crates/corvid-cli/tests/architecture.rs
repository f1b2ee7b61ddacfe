//! The crate table of `ARCHITECTURE.md` is the layering, and this test holds the workspace to
//! it: every crate has a row; its normal dependencies on corvid crates are the row's "depends
//! on today" (so the page stays true), and a new one must be in "may also depend on" (so a
//! forbidden arrow fails here, with the row to read). Test-only dependencies are not checked.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// One row of the table.
#[derive(Debug)]
struct Row {
    today: BTreeSet<String>,
    also: BTreeSet<String>,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The backticked crate names in a table cell.
fn crate_names(cell: &str) -> BTreeSet<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .filter(|name| name.starts_with("corvid-"))
        .map(str::to_owned)
        .collect()
}

/// The rows of the crate table: `| `corvid-x` | owns | today | also |`.
fn documented(text: &str) -> BTreeMap<String, Row> {
    let mut rows = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        let [name, _owns, today, also] = cells.as_slice() else {
            continue;
        };
        let name = name.trim();
        let Some(name) = name
            .strip_prefix('`')
            .and_then(|name| name.strip_suffix('`'))
            .filter(|name| name.starts_with("corvid-"))
        else {
            continue;
        };
        let row = Row {
            today: crate_names(today),
            also: crate_names(also),
        };
        assert!(
            rows.insert(name.to_owned(), row).is_none(),
            "ARCHITECTURE.md lists {name} twice"
        );
    }
    rows
}

/// Each workspace crate and its normal (and build) dependencies on corvid crates, as cargo
/// resolves the manifests.
fn actual() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata is JSON");
    let mut crates = BTreeMap::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().expect("a package name").to_owned();
        let dependencies = package["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|dependency| dependency["kind"].as_str() != Some("dev"))
            .filter_map(|dependency| dependency["name"].as_str())
            .filter(|dependency| dependency.starts_with("corvid-"))
            .map(str::to_owned)
            .collect();
        crates.insert(name, dependencies);
    }
    crates
}

/// What does not hold between the table and the workspace, one line each.
fn problems(
    rows: &BTreeMap<String, Row>,
    crates: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, dependencies) in crates {
        let Some(row) = rows.get(name) else {
            problems.push(format!(
                "{name} has no row in ARCHITECTURE.md's crate table"
            ));
            continue;
        };
        for dependency in dependencies {
            if !row.today.contains(dependency) && !row.also.contains(dependency) {
                problems.push(format!(
                    "{name} depends on {dependency}, which ARCHITECTURE.md does not allow: move the code, or change the layering there first"
                ));
            } else if !row.today.contains(dependency) {
                problems.push(format!(
                    "{name} now depends on {dependency} (allowed): add it to the row's \"depends on today\""
                ));
            }
        }
        for gone in row.today.difference(dependencies) {
            problems.push(format!(
                "ARCHITECTURE.md says {name} depends on {gone}, and it no longer does: update the row"
            ));
        }
    }
    for name in rows.keys().filter(|name| !crates.contains_key(*name)) {
        problems.push(format!(
            "ARCHITECTURE.md has a row for {name}, which is not in the workspace"
        ));
    }
    problems
}

#[test]
fn every_crate_depends_only_on_what_architecture_md_allows() {
    let text = std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md at the repository root");
    let rows = documented(&text);
    let crates = actual();
    assert!(crates.len() > 10, "cargo metadata listed {crates:?}");
    let problems = problems(&rows, &crates);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_forbidden_arrow_an_allowed_new_one_and_a_stale_row_are_each_reported() {
    let rows = documented(
        "| Crate | Owns | Today | Also |\n|---|---|---|---|\n\
         | `corvid-low` | a leaf | — | — |\n\
         | `corvid-mid` | the middle | `corvid-low` | `corvid-extra` |\n\
         | `corvid-extra` | another leaf | — | — |\n",
    );
    assert_eq!(rows.len(), 3);
    let set = |names: &[&str]| names.iter().map(|name| (*name).to_owned()).collect();
    let faithful = BTreeMap::from([
        ("corvid-low".to_owned(), set(&[])),
        ("corvid-mid".to_owned(), set(&["corvid-low"])),
        ("corvid-extra".to_owned(), set(&[])),
    ]);
    assert_eq!(problems(&rows, &faithful), Vec::<String>::new());

    let mut upward = faithful.clone();
    upward.insert("corvid-low".to_owned(), set(&["corvid-mid"]));
    let found = problems(&rows, &upward);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("corvid-low depends on corvid-mid, which ARCHITECTURE.md does not allow")
    );

    let mut allowed = faithful.clone();
    allowed.insert(
        "corvid-mid".to_owned(),
        set(&["corvid-low", "corvid-extra"]),
    );
    let found = problems(&rows, &allowed);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("add it to the row"), "{found:?}");

    let mut stale = faithful.clone();
    stale.insert("corvid-mid".to_owned(), set(&[]));
    stale.insert("corvid-new".to_owned(), set(&[]));
    let found = problems(&rows, &stale);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().any(|line| line.contains("no longer does")));
    assert!(
        found
            .iter()
            .any(|line| line.contains("corvid-new has no row"))
    );
}
