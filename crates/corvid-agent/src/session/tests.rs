#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_protocol::ApprovalDecision;

use super::*;

#[tokio::test]
async fn the_first_answer_wins_and_a_second_is_refused_with_the_reason() {
    let approvals = Approvals::default();
    let answer = approvals.register("p1").unwrap();
    approvals
        .answer("p1", Verdict::Decided(ApprovalDecision::Approve))
        .unwrap();
    assert!(matches!(
        answer.await.unwrap(),
        Verdict::Decided(ApprovalDecision::Approve)
    ));
    assert_eq!(
        approvals.answer(
            "p1",
            Verdict::Decided(ApprovalDecision::Reject { feedback: None })
        ),
        Err(Refusal::AlreadyAnswered("p1".into(), "approved"))
    );
    assert_eq!(
        approvals.answer("p9", Verdict::Interrupted),
        Err(Refusal::Unknown("p9".into()))
    );
}

#[tokio::test]
async fn closing_answers_what_waits_and_what_comes_later() {
    let approvals = Approvals::default();
    let waiting = approvals.register("p1").unwrap();
    approvals.close();
    assert!(matches!(waiting.await.unwrap(), Verdict::SessionClosed));
    assert!(matches!(
        approvals.register("p2"),
        Err(Verdict::SessionClosed)
    ));
    assert!(!approvals.is_waiting());
}

#[test]
fn a_conversation_is_held_by_one_session() {
    let claims = Claims::default();
    claims.claim("c1", "a1").unwrap();
    claims.claim("c1", "a1").unwrap();
    assert_eq!(claims.claim("c1", "a2"), Err(HeldBy("a1".to_owned())));
    claims.release("c1", "a2");
    assert_eq!(claims.holder("c1").as_deref(), Some("a1"));
    claims.release("c1", "a1");
    claims.claim("c1", "a2").unwrap();
}

/// Closing answers "session closed" and then cancels: a turn that sees the cancel first must
/// still take the answer that came before it (this raced on two threads).
#[tokio::test]
async fn an_answer_given_before_a_withdrawal_is_kept() {
    let approvals = Approvals::default();
    let mut answer = approvals.register("p1").unwrap();
    approvals.close();
    assert!(!approvals.withdraw("p1", &Verdict::Cancelled));
    assert!(matches!(answer.try_recv(), Ok(Verdict::SessionClosed)));
    let _unanswered = approvals.register("p2");
    let open = Approvals::default();
    let _waiting = open.register("p3").unwrap();
    assert!(open.withdraw("p3", &Verdict::Cancelled));
    assert_eq!(
        open.answer("p3", Verdict::Interrupted),
        Err(Refusal::AlreadyAnswered("p3".into(), "cancelled"))
    );
}
