use pretty_assertions::assert_eq;

use super::*;

use ApprovalPolicy::{Ask, AutoEdit, FullAuto};
use GateDecision::{Ask as Asks, Refuse as Refuses, Run as Runs};

fn edit(tool: &str) -> ActionKind {
    ActionKind::Edit {
        tool: tool.to_owned(),
        path: "src/lib.rs".to_owned(),
    }
}

fn command(command: &str) -> ActionKind {
    ActionKind::Command {
        command: command.to_owned(),
    }
}

fn other(tool: &str, mutating: bool) -> ActionKind {
    ActionKind::Other {
        tool: tool.to_owned(),
        origin: None,
        mutating,
    }
}

fn from_origin(tool: &str, origin: &str) -> ActionKind {
    ActionKind::Other {
        tool: tool.to_owned(),
        origin: Some(origin.to_owned()),
        mutating: true,
    }
}

#[test]
fn an_origin_rule_allows_every_tool_of_that_origin_and_nothing_else() {
    let rules = [ApprovalRule::origin("mcp:github")];
    for policy in [Ask, AutoEdit] {
        assert_eq!(
            decision_for(
                policy,
                &rules,
                &from_origin("mcp__github__create_issue", "mcp:github")
            ),
            Runs
        );
        assert_eq!(
            decision_for(
                policy,
                &rules,
                &from_origin("mcp__gitlab__create_issue", "mcp:gitlab")
            ),
            Asks
        );
        // Neither a built-in (no origin) nor a command, nor an edit, whatever its name.
        assert_eq!(
            decision_for(policy, &rules, &other("mcp:github", true)),
            Asks
        );
        assert_eq!(decision_for(policy, &rules, &command("mcp:github")), Asks);
    }
    assert_eq!(decision_for(Ask, &rules, &edit("mcp:github")), Asks);
    // A tool rule still names one tool of the origin.
    let one = [ApprovalRule::tool("mcp__github__create_issue")];
    assert_eq!(
        decision_for(
            Ask,
            &one,
            &from_origin("mcp__github__create_issue", "mcp:github")
        ),
        Runs
    );
    assert_eq!(
        decision_for(
            Ask,
            &one,
            &from_origin("mcp__github__delete_repo", "mcp:github")
        ),
        Asks
    );
}

#[test]
fn policy_table_without_rules() {
    // (action, [decision under read-only, plan, ask, auto-edit, full-auto])
    let table = [
        (ActionKind::Read, [Runs, Runs, Runs, Runs, Runs]),
        (
            other("github_search", false),
            [Runs, Runs, Runs, Runs, Runs],
        ),
        (edit("edit"), [Refuses, Refuses, Asks, Runs, Runs]),
        (edit("write"), [Refuses, Refuses, Asks, Runs, Runs]),
        (command("cargo test"), [Refuses, Refuses, Asks, Asks, Runs]),
        (
            command("rm -rf target; ls"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (
            other("github_create_issue", true),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
    ];
    for (action, expected) in table {
        let got = ApprovalPolicy::ALL.map(|policy| decision_for(policy, &[], &action));
        assert_eq!(got, expected, "{action:?}");
    }
}

#[test]
fn rules_table() {
    let rules = [
        ApprovalRule::tool("write"),
        ApprovalRule::tool("github_create_issue"),
        ApprovalRule::command_prefix("cargo test"),
        ApprovalRule::command_prefix("ls"),
    ];
    // (action, [decision under read-only, plan, ask, auto-edit, full-auto]) with the rules above kept
    let table = [
        // A tool rule covers its tool only.
        (edit("write"), [Refuses, Refuses, Runs, Runs, Runs]),
        (edit("edit"), [Refuses, Refuses, Asks, Runs, Runs]),
        (
            other("github_create_issue", true),
            [Refuses, Refuses, Runs, Runs, Runs],
        ),
        (
            other("github_delete_repo", true),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        // Prefix rules match on word boundaries.
        (command("cargo test"), [Refuses, Refuses, Runs, Runs, Runs]),
        (
            command("cargo test -p corvid-protocol"),
            [Refuses, Refuses, Runs, Runs, Runs],
        ),
        (
            command("  cargo \t test  --workspace"),
            [Refuses, Refuses, Runs, Runs, Runs],
        ),
        (command("cargo testx"), [Refuses, Refuses, Asks, Asks, Runs]),
        (command("cargo tes"), [Refuses, Refuses, Asks, Asks, Runs]),
        (command("cargo"), [Refuses, Refuses, Asks, Asks, Runs]),
        (command("cargo build"), [Refuses, Refuses, Asks, Asks, Runs]),
        (command("ls -la src"), [Refuses, Refuses, Runs, Runs, Runs]),
        (command("lsof -i"), [Refuses, Refuses, Asks, Asks, Runs]),
        // Control operators defeat every prefix rule.
        (
            command("cargo test; rm -rf ~"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (
            command("cargo test && rm -rf ~"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (
            command("cargo test || rm -rf ~"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (
            command("cargo test | sh"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (
            command("cargo test & rm -rf ~"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (
            command("cargo test `rm -rf ~`"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (
            command("cargo test $(rm -rf ~)"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (
            command("cargo test\nrm -rf ~"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (
            command("cargo test\r\nrm -rf ~"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (
            command("cargo test > ~/.bashrc"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (
            command("cargo test < /etc/passwd"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
        (command("ls \"a;b\""), [Refuses, Refuses, Asks, Asks, Runs]),
        // A tool rule naming the shell tool never covers commands.
        (
            command("bash -c 'echo hi'"),
            [Refuses, Refuses, Asks, Asks, Runs],
        ),
    ];
    for (action, expected) in table {
        let got = ApprovalPolicy::ALL.map(|policy| decision_for(policy, &rules, &action));
        assert_eq!(got, expected, "{action:?}");
    }
}

#[test]
fn a_tool_rule_for_the_shell_does_not_allow_commands() {
    let rules = [ApprovalRule::tool("bash")];
    assert_eq!(decision_for(Ask, &rules, &command("ls")), Asks);
    assert_eq!(decision_for(AutoEdit, &rules, &command("ls")), Asks);
}

#[test]
fn an_empty_or_blank_prefix_allows_nothing() {
    for prefix in ["", "   ", "\t"] {
        let rules = [ApprovalRule::command_prefix(prefix)];
        assert_eq!(
            decision_for(Ask, &rules, &command("ls")),
            Asks,
            "{prefix:?}"
        );
        assert_eq!(decision_for(Ask, &rules, &command("")), Asks, "{prefix:?}");
    }
}

#[test]
fn a_prefix_rule_does_not_cover_edits_or_other_tools() {
    let rules = [ApprovalRule::command_prefix("edit")];
    assert_eq!(decision_for(Ask, &rules, &edit("edit")), Asks);
    assert_eq!(decision_for(Ask, &rules, &other("edit", true)), Asks);
}

#[test]
fn control_operators() {
    let flagged = [
        "a; b", "a && b", "a || b", "a | b", "a & b", "a `b`", "a $(b)", "a\nb", "a\rb", "a > f",
        "a >> f", "a < f", "a 2>&1", "a <(b)",
    ];
    for text in flagged {
        assert!(command_has_control_operators(text), "{text:?}");
    }
    let plain = [
        "cargo test -p x",
        "git log --oneline -n 5",
        "echo $HOME",
        "echo ${HOME}",
        "grep -rn 'fn main' src",
        "",
    ];
    for text in plain {
        assert!(!command_has_control_operators(text), "{text:?}");
    }
}

#[test]
fn suggested_rules() {
    let table = [
        (ActionKind::Read, None),
        (edit("edit"), Some(ApprovalRule::tool("edit"))),
        (
            other("github_create_issue", true),
            Some(ApprovalRule::tool("github_create_issue")),
        ),
        (
            command("cargo test -p x"),
            Some(ApprovalRule::command_prefix("cargo test")),
        ),
        (
            command("git checkout main"),
            Some(ApprovalRule::command_prefix("git checkout")),
        ),
        (
            command("npm run test:unit"),
            Some(ApprovalRule::command_prefix("npm run")),
        ),
        (command("ls -la"), Some(ApprovalRule::command_prefix("ls"))),
        (
            command("python3 script.py"),
            Some(ApprovalRule::command_prefix("python3")),
        ),
        (
            command("  make  "),
            Some(ApprovalRule::command_prefix("make")),
        ),
        (command("cargo test && ls"), None),
        (command("RUST_LOG=debug cargo run"), None),
        (command("   "), None),
    ];
    for (action, expected) in table {
        assert_eq!(ApprovalRule::suggest_for(&action), expected, "{action:?}");
    }
}

#[test]
fn a_suggested_rule_allows_the_action_it_was_suggested_for() {
    let actions = [
        edit("write"),
        other("deploy", true),
        command("cargo test -p x"),
        command("git checkout main"),
        command("ls -la"),
    ];
    for action in actions {
        let rule = ApprovalRule::suggest_for(&action);
        let rules: Vec<ApprovalRule> = rule.into_iter().collect();
        assert_eq!(decision_for(Ask, &rules, &action), Runs, "{action:?}");
    }
}

#[test]
fn policy_names_round_trip() {
    for policy in ApprovalPolicy::ALL {
        assert_eq!(policy.as_str().parse::<ApprovalPolicy>(), Ok(policy));
        assert_eq!(policy.to_string(), policy.as_str());
        let json = serde_json::to_string(&policy).unwrap();
        assert_eq!(json, format!("\"{}\"", policy.as_str()));
        assert_eq!(
            serde_json::from_str::<ApprovalPolicy>(&json).unwrap(),
            policy
        );
    }
    assert_eq!(
        ApprovalPolicy::ALL.map(ApprovalPolicy::as_str),
        ["read-only", "plan", "ask", "auto-edit", "full-auto"]
    );
    assert_eq!(ApprovalPolicy::default(), Ask);
    assert_eq!(FullAuto.as_str(), "full-auto");
}

#[test]
fn unknown_policy_names_list_the_accepted_ones() {
    for given in ["auto_edit", "Ask", "never", "", " ask"] {
        let error = given.parse::<ApprovalPolicy>().unwrap_err();
        assert_eq!(error.given(), given);
        assert_eq!(
            error.to_string(),
            format!(
                "unknown approval policy `{given}`: expected one of read-only, plan, ask, auto-edit, full-auto"
            )
        );
    }
    let error = serde_json::from_str::<ApprovalPolicy>("\"auto_edit\"").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("expected one of `read-only`, `plan`, `ask`, `auto-edit`, `full-auto`"),
        "{error}"
    );
}

#[test]
fn widened_and_unsandboxed_commands_ask_under_every_policy_and_rule() {
    let rules = [ApprovalRule::command_prefix("npm install")];
    let action = command("npm install");
    // (confinement, [decision under read-only, plan, ask, auto-edit, full-auto]) with a rule
    // that matches. Read-only and plan run a command only in the kernel sandbox (made
    // read-only by the engine).
    let table = [
        (Confinement::Sandboxed, [Runs, Runs, Runs, Runs, Runs]),
        (
            Confinement::SandboxOff,
            [Refuses, Refuses, Runs, Runs, Runs],
        ),
        (Confinement::Widened, [Refuses, Refuses, Asks, Asks, Asks]),
        (
            Confinement::Unsandboxed,
            [Refuses, Refuses, Asks, Asks, Asks],
        ),
    ];
    for (confinement, expected) in table {
        let got = ApprovalPolicy::ALL
            .map(|policy| decision_with_sandbox(policy, &rules, &action, confinement));
        assert_eq!(got, expected, "{confinement:?}");
    }
    // Without the rule, a sandboxed command follows the policy table.
    let got = ApprovalPolicy::ALL
        .map(|policy| decision_with_sandbox(policy, &[], &action, Confinement::Sandboxed));
    assert_eq!(got, [Runs, Runs, Asks, Asks, Runs]);
}

#[test]
fn read_only_refuses_every_change_whatever_the_rules() {
    let rules = [
        ApprovalRule::tool("write"),
        ApprovalRule::command_prefix("ls"),
        ApprovalRule::origin("mcp:github"),
    ];
    for policy in [ApprovalPolicy::ReadOnly, ApprovalPolicy::Plan] {
        for action in [
            edit("write"),
            command("ls"),
            other("github_create_issue", true),
        ] {
            assert_eq!(decision_for(policy, &rules, &action), Refuses);
            assert_eq!(
                decision_with_sandbox(policy, &rules, &action, Confinement::Widened),
                Refuses
            );
        }
        // Edits and mutating tools stay refused even with the sandbox in force.
        for action in [edit("write"), other("github_create_issue", true)] {
            assert_eq!(
                decision_with_sandbox(policy, &rules, &action, Confinement::Sandboxed),
                Refuses
            );
        }
        assert_eq!(decision_for(policy, &rules, &ActionKind::Read), Runs);
    }
}

#[test]
fn rules_describe_themselves() {
    assert_eq!(
        ApprovalRule::command_prefix("cargo test").describe(),
        "Always allow commands starting with `cargo test` (without shell operators) in this session."
    );
    assert_eq!(
        ApprovalRule::origin("mcp:github").describe(),
        "Always allow every tool of the MCP server `github` in this session."
    );
}
