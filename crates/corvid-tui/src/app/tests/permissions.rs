//! Saved permission rules in the terminal: 4 saves "always" to the project, 7 "never" (a deny
//! rule) for the user, `/permissions` lists the rules and removes one.

use corvid_protocol::{DecisionKind, PermissionRule, ReplyOk, RuleAction, RuleFile};

use super::plan::request_of;
use super::*;

fn savable() -> ServerRequest {
    request_of(ProposalNotification {
        proposal_id: "p2".to_owned(),
        call_id: "t2".to_owned(),
        title: "Run cargo test".to_owned(),
        kind: ProposalKind::Command {
            command: "cargo test".to_owned(),
            cwd: ".".to_owned(),
        },
        decisions: vec![
            DecisionKind::Approve,
            DecisionKind::ApproveAlways,
            DecisionKind::SaveAlwaysProject,
            DecisionKind::SaveAlwaysUser,
            DecisionKind::Reject,
            DecisionKind::SaveNeverProject,
            DecisionKind::SaveNeverUser,
        ],
        always_scope: Some(corvid_protocol::ApprovalRule::command_prefix("cargo test")),
        always_description: None,
        sandbox: None,
        notice: None,
    })
}

#[test]
fn four_saves_always_to_the_project_five_for_the_user_and_six_seven_never() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.request(savable());
    assert!(area(&app, 160, 12).contains("4 always, saved in the project"));
    app.key(key(KeyCode::Char('4')));
    assert_eq!(
        decisions(&recorder).last().cloned().unwrap(),
        ApprovalDecision::SaveAlways {
            scope: corvid_protocol::ApprovalRule::command_prefix("cargo test"),
            file: RuleFile::Project
        }
    );
    app.request(savable());
    app.key(key(KeyCode::Char('5')));
    assert!(matches!(
        decisions(&recorder).last(),
        Some(ApprovalDecision::SaveAlways {
            file: RuleFile::User,
            ..
        })
    ));
    app.request(savable());
    assert!(area(&app, 200, 12).contains("6 never, saved in the project"));
    app.key(key(KeyCode::Char('7')));
    assert_eq!(
        decisions(&recorder).last().cloned().unwrap(),
        ApprovalDecision::SaveNever {
            scope: corvid_protocol::ApprovalRule::command_prefix("cargo test"),
            file: RuleFile::User
        }
    );
    // Without a save offered, 4 is typed.
    app.request(proposal());
    app.key(key(KeyCode::Char('4')));
    assert_eq!(app.editor.text(), "4");
}

#[test]
fn slash_permissions_lists_and_removes() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    typed(&mut app, "/permissions remove 1");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        ops(&recorder).last(),
        Some(&Op::RemovePermission { number: 1 })
    );
    app.reply(reply(
        ops(&recorder).len(),
        ReplyOk::Permissions {
            rules: vec![PermissionRule {
                number: 1,
                rule: "Bash(ls:*)".to_owned(),
                action: RuleAction::Allow,
                source: ".corvid/settings.json".to_owned(),
                active: true,
            }],
            message: Some("removed `Bash(rm:*)` from .corvid/settings.json".to_owned()),
        },
    ));
    let shown = printed(&mut app);
    assert!(shown.contains("removed `Bash(rm:*)`"), "{shown}");
    // `/permissions add` goes through the same one command table.
    typed(&mut app, "/permissions add user deny Bash(rm:*)");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        ops(&recorder).last(),
        Some(&Op::AddPermission {
            action: RuleAction::Deny,
            rule: "Bash(rm:*)".to_owned(),
            file: RuleFile::User
        })
    );
    assert!(
        shown.contains("1. allow Bash(ls:*) — .corvid/settings.json"),
        "{shown}"
    );
}
