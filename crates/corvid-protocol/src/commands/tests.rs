use pretty_assertions::assert_eq;

use super::*;

fn skills() -> Vec<ProjectCommand> {
    vec![ProjectCommand::skill("release", "cut a release")]
}

#[test]
fn a_line_without_a_slash_is_a_message() {
    assert_eq!(parse("undo the last change", &skills()), None);
    assert_eq!(parse("/", &skills()), None);
}

#[test]
fn turn_numbers_reach_the_operation() {
    assert_eq!(parse("/undo 2", &[]), Some(Ok(Op::Undo { turn: Some(2) })));
    assert_eq!(parse("/diff 1", &[]), Some(Ok(Op::Diff { turn: Some(1) })));
    assert_eq!(parse("/diff", &[]), Some(Ok(Op::Diff { turn: None })));
    assert_eq!(parse("  /compact ", &[]), Some(Ok(Op::Compact)));
    assert!(matches!(
        parse("/undo two", &[]),
        Some(Err(CommandError::Argument { name: "undo", .. }))
    ));
}

#[test]
fn new_and_open_are_service_requests() {
    assert_eq!(
        parse("/new", &[]),
        Some(Ok(Op::OpenConversation {
            conversation_id: None
        }))
    );
    assert_eq!(
        parse("/open c-7", &[]),
        Some(Ok(Op::OpenConversation {
            conversation_id: Some("c-7".to_owned())
        }))
    );
    assert!(matches!(parse("/open", &[]), Some(Err(_))));
}

#[test]
fn a_skill_is_a_message_naming_it() {
    assert_eq!(
        parse("/release 1.2.0 today", &skills()),
        Some(Ok(Op::Send(SendParams {
            skill: Some("release".to_owned()),
            ..SendParams::text("1.2.0 today")
        })))
    );
    assert_eq!(
        parse("/release", &[]),
        Some(Err(CommandError::Unknown("release".to_owned())))
    );
}

#[test]
fn approval_takes_the_wire_names_read_only_included() {
    assert_eq!(
        parse("/approval read-only", &[]),
        Some(Ok(Op::SetApprovalPolicy {
            policy: ApprovalPolicy::ReadOnly
        }))
    );
    assert!(matches!(parse("/approval sometimes", &[]), Some(Err(_))));
}

#[test]
fn mcp_lists_or_trusts() {
    assert_eq!(parse("/mcp", &[]), Some(Ok(Op::ListToolServers)));
    assert_eq!(
        parse("/mcp trust docs", &[]),
        Some(Ok(Op::TrustToolServer {
            name: "docs".to_owned()
        }))
    );
    assert!(matches!(parse("/mcp start docs", &[]), Some(Err(_))));
    assert_eq!(parse("/permissions", &[]), Some(Ok(Op::ListPermissions)));
    assert_eq!(
        parse("/permissions remove 2", &[]),
        Some(Ok(Op::RemovePermission { number: 2 }))
    );
    assert_eq!(
        parse("/permissions add deny Bash(rm -rf:*)", &[]),
        Some(Ok(Op::AddPermission {
            action: RuleAction::Deny,
            rule: "Bash(rm -rf:*)".to_owned(),
            file: RuleFile::Project
        }))
    );
    assert_eq!(
        parse("/permissions add user ask WebFetch", &[]),
        Some(Ok(Op::AddPermission {
            action: RuleAction::Ask,
            rule: "WebFetch".to_owned(),
            file: RuleFile::User
        }))
    );
    for bad in [
        "/permissions add",
        "/permissions add deny",
        "/permissions add user forbid Bash",
        "/permissions remove",
        "/permissions remove 0",
        "/permissions drop 1",
    ] {
        assert!(matches!(parse(bad, &[]), Some(Err(_))), "{bad}");
    }
    assert_eq!(
        parse("/approval plan", &[]),
        Some(Ok(Op::SetApprovalPolicy {
            policy: ApprovalPolicy::Plan
        }))
    );
}

#[test]
fn every_command_of_the_table_parses() {
    for command in COMMANDS {
        let line = match command.argument {
            "" => format!("/{}", command.name),
            "[turn]"
            | "[trust <server>]"
            | "[message] [files]"
            | "[message]"
            | "[remove <n> | add [project|user] allow|ask|deny <rule>]" => {
                format!("/{}", command.name)
            }
            "<read-only|plan|ask|auto-edit|full-auto>" => format!("/{} plan", command.name),
            _ => format!("/{} x", command.name),
        };
        assert!(
            matches!(parse(&line, &[]), Some(Ok(_))),
            "{line} does not parse"
        );
    }
}

#[test]
fn skills_join_the_specs_unless_a_command_has_their_name() {
    let mut skills = skills();
    skills.push(ProjectCommand::skill("diff", "shadowed"));
    let specs = specs(&skills);
    assert_eq!(specs.len(), COMMANDS.len() + 1);
    assert_eq!(specs.last().map(|spec| spec.name.as_str()), Some("release"));
}

#[test]
fn a_custom_command_is_a_message_naming_it_with_its_arguments() {
    let project = vec![
        ProjectCommand::custom("frontend:component", "make a component", "<name>"),
        ProjectCommand::skill("frontend:component", "shadowed by the command before it"),
    ];
    assert_eq!(
        parse("/frontend:component Button  red", &project),
        Some(Ok(Op::Send(SendParams {
            command: Some("frontend:component".to_owned()),
            ..SendParams::text("Button  red")
        })))
    );
    let specs = specs(&project);
    assert_eq!(specs.len(), COMMANDS.len() + 1);
    let spec = specs.last().unwrap();
    assert_eq!(
        (spec.argument.as_str(), spec.description.as_str()),
        ("<name>", "make a component")
    );
}

#[test]
fn rewind_and_fork_take_the_numbers_rewind_lists() {
    assert_eq!(parse("/rewind", &[]), Some(Ok(Op::UserMessages)));
    assert_eq!(
        parse("/rewind 2", &[]),
        Some(Ok(Op::Rewind {
            message: 1,
            restore_files: false
        }))
    );
    assert_eq!(
        parse("/rewind 1 files", &[]),
        Some(Ok(Op::Rewind {
            message: 0,
            restore_files: true
        }))
    );
    assert_eq!(parse("/fork", &[]), Some(Ok(Op::Fork { message: None })));
    assert_eq!(
        parse("/fork 3", &[]),
        Some(Ok(Op::Fork { message: Some(2) }))
    );
    for bad in ["/rewind 0", "/rewind two", "/rewind 1 all", "/fork x"] {
        assert!(matches!(parse(bad, &[]), Some(Err(_))), "{bad}");
    }
}
