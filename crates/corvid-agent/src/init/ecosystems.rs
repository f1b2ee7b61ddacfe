//! The build systems and languages `/init` recognises from the files in the project root, with
//! the commands they usually take (the model confirms them before writing them down).

use super::{Ecosystem, Listing};

/// The build systems and languages whose manifests sit in the root, in a fixed order.
pub(super) fn detect(listing: &Listing<'_>) -> Vec<Ecosystem> {
    let has = |name: &str| listing.has(name);
    let has_dir = |name: &str| listing.has_dir(name);
    let read = |name: &str| listing.read(name);
    let mut found = Vec::new();
    let mut add = |name: &'static str, manifest: &str, commands: Vec<String>| {
        found.push(Ecosystem {
            name,
            manifest: manifest.to_owned(),
            commands,
        });
    };
    let strings = |commands: &[&str]| {
        commands
            .iter()
            .map(|command| (*command).to_owned())
            .collect::<Vec<_>>()
    };

    if has("Cargo.toml") {
        let workspace = read("Cargo.toml")
            .is_some_and(|text| text.lines().any(|line| line.trim() == "[workspace]"));
        let all = if workspace { " --workspace" } else { "" };
        add(
            "Rust",
            "Cargo.toml",
            vec![
                format!("cargo build{all}"),
                format!("cargo test{all}"),
                format!("cargo clippy{all} --all-targets -- -D warnings"),
                "cargo fmt --check".to_owned(),
            ],
        );
    }
    if has("package.json") {
        add("Node.js", "package.json", node_commands(listing));
    }
    if has("deno.json") || has("deno.jsonc") {
        let manifest = if has("deno.json") {
            "deno.json"
        } else {
            "deno.jsonc"
        };
        add(
            "Deno",
            manifest,
            strings(&["deno task", "deno test", "deno lint", "deno fmt --check"]),
        );
    }
    let python_manifest = ["pyproject.toml", "setup.py", "requirements.txt"]
        .into_iter()
        .find(|name| has(name));
    if let Some(manifest) = python_manifest {
        add("Python", manifest, python_commands(manifest, listing));
    }
    if has("go.mod") {
        add(
            "Go",
            "go.mod",
            strings(&["go build ./...", "go test ./...", "go vet ./..."]),
        );
    }
    if let Some(makefile) = ["Makefile", "makefile", "GNUmakefile"]
        .into_iter()
        .find(|name| has(name))
    {
        let targets = read(makefile)
            .map(|text| make_targets(&text))
            .unwrap_or_default();
        let commands = if targets.is_empty() {
            vec!["make".to_owned()]
        } else {
            targets
                .iter()
                .map(|target| format!("make {target}"))
                .collect()
        };
        add("Make", makefile, commands);
    }
    if let Some(justfile) = ["justfile", "Justfile", ".justfile"]
        .into_iter()
        .find(|name| has(name))
    {
        add("just", justfile, strings(&["just --list"]));
    }
    if has("CMakeLists.txt") {
        add(
            "CMake",
            "CMakeLists.txt",
            strings(&[
                "cmake -B build",
                "cmake --build build",
                "ctest --test-dir build",
            ]),
        );
    }
    if has("pom.xml") {
        add(
            "Java (Maven)",
            "pom.xml",
            strings(&["mvn -q package", "mvn test"]),
        );
    }
    if let Some(gradle) = ["build.gradle.kts", "build.gradle"]
        .into_iter()
        .find(|name| has(name))
    {
        let tool = if has("gradlew") {
            "./gradlew"
        } else {
            "gradle"
        };
        add(
            "Gradle",
            gradle,
            vec![format!("{tool} build"), format!("{tool} test")],
        );
    }
    if has("Gemfile") {
        let test = if has_dir("spec") {
            "bundle exec rspec"
        } else {
            "bundle exec rake test"
        };
        add("Ruby", "Gemfile", strings(&["bundle install", test]));
    }
    if has("mix.exs") {
        add(
            "Elixir",
            "mix.exs",
            strings(&["mix deps.get", "mix test", "mix format --check-formatted"]),
        );
    }
    if has("composer.json") {
        add(
            "PHP",
            "composer.json",
            strings(&["composer install", "vendor/bin/phpunit"]),
        );
    }
    if has("Package.swift") {
        add(
            "Swift",
            "Package.swift",
            strings(&["swift build", "swift test"]),
        );
    }
    if has("build.zig") {
        add(
            "Zig",
            "build.zig",
            strings(&["zig build", "zig build test"]),
        );
    }
    let dotnet = listing.entries.iter().find(|entry| {
        !entry.is_dir && (entry.name.ends_with(".sln") || entry.name.ends_with(".csproj"))
    });
    if let Some(entry) = dotnet {
        add(
            ".NET",
            &entry.name,
            strings(&["dotnet build", "dotnet test"]),
        );
    }
    if has("flake.nix") {
        add(
            "Nix",
            "flake.nix",
            strings(&["nix develop", "nix flake check"]),
        );
    }
    found
}

fn node_commands(listing: &Listing<'_>) -> Vec<String> {
    let has = |name: &str| listing.has(name);
    let manager = if has("pnpm-lock.yaml") {
        "pnpm"
    } else if has("yarn.lock") {
        "yarn"
    } else if has("bun.lockb") || has("bun.lock") {
        "bun"
    } else {
        "npm"
    };
    let mut commands = vec![format!("{manager} install")];
    let scripts: Vec<String> = listing
        .read("package.json")
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| {
            json.get("scripts")
                .and_then(|scripts| scripts.as_object())
                .map(|map| map.keys().cloned().collect())
        })
        .unwrap_or_default();
    // The usual scripts first, then others, eight at most.
    let usual = [
        "build",
        "test",
        "lint",
        "typecheck",
        "check",
        "format",
        "dev",
        "start",
    ];
    let mut ordered: Vec<&String> = usual
        .iter()
        .filter_map(|name| scripts.iter().find(|script| script == name))
        .collect();
    ordered.extend(
        scripts
            .iter()
            .filter(|script| !usual.contains(&script.as_str())),
    );
    commands.extend(
        ordered
            .into_iter()
            .take(8)
            .map(|script| format!("{manager} run {script}")),
    );
    commands
}

fn python_commands(manifest: &str, listing: &Listing<'_>) -> Vec<String> {
    let has = |name: &str| listing.has(name);
    let has_dir = |name: &str| listing.has_dir(name);
    let pyproject = if manifest == "pyproject.toml" {
        listing.read("pyproject.toml").unwrap_or_default()
    } else {
        String::new()
    };
    let (install, run) = if has("uv.lock") {
        ("uv sync".to_owned(), "uv run ")
    } else if has("poetry.lock") {
        ("poetry install".to_owned(), "poetry run ")
    } else if manifest == "requirements.txt" {
        ("pip install -r requirements.txt".to_owned(), "")
    } else {
        ("pip install -e .".to_owned(), "")
    };
    let mut commands = vec![install];
    if has_dir("tests") || has_dir("test") || pyproject.contains("pytest") {
        commands.push(format!("{run}pytest"));
    }
    if pyproject.contains("[tool.ruff") || has("ruff.toml") || has(".ruff.toml") {
        commands.push(format!("{run}ruff check ."));
        commands.push(format!("{run}ruff format --check ."));
    }
    if pyproject.contains("[tool.mypy") || has("mypy.ini") {
        commands.push(format!("{run}mypy ."));
    }
    commands
}

/// The explicit targets of a Makefile (not pattern rules, special targets or variables), ten at most.
fn make_targets(text: &str) -> Vec<String> {
    let mut targets: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with(['\t', ' ', '#', '.']) {
            continue;
        }
        let Some((head, rest)) = line.split_once(':') else {
            continue;
        };
        if rest.starts_with('=') {
            continue; // `VAR := value`
        }
        for target in head.split_whitespace() {
            let plain = target
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.'));
            if plain && !targets.iter().any(|known| known == target) {
                targets.push(target.to_owned());
            }
        }
        if targets.len() >= 10 {
            break;
        }
    }
    targets.truncate(10);
    targets
}
