use std::sync::Mutex;

use serde_json::json;

use super::*;
use crate::source::{Listing, ToolFuture};
use crate::tool::{Proposal, ToolKind};

/// A source whose listing the test sets; its one plan is the arguments, echoed back at apply.
struct Fake {
    name: &'static str,
    listing: Mutex<Listing>,
}

impl Fake {
    fn new(name: &'static str, tools: &[(&str, ToolKind)]) -> Arc<Self> {
        Arc::new(Self {
            name,
            listing: Mutex::new(Listing {
                tools: tools
                    .iter()
                    .map(|(tool, kind)| {
                        ToolSpec::new(
                            *tool,
                            format!("{name} {tool}"),
                            json!({"type": "object", "properties": {}}),
                            *kind,
                        )
                    })
                    .collect(),
                notices: Vec::new(),
            }),
        })
    }

    fn set_notices(&self, notices: &[&str]) {
        self.listing.lock().unwrap().notices = notices.iter().map(|n| (*n).to_owned()).collect();
    }
}

impl ToolSource for Fake {
    fn name(&self) -> &str {
        self.name
    }

    fn list(&self) -> ToolFuture<'_, Listing> {
        let listing = self.listing.lock().unwrap().clone();
        Box::pin(async move { listing })
    }

    fn prepare<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a, Result<Prepared, ToolError>> {
        Box::pin(async move {
            // A careless source: wrong name and kind; the offer corrects both.
            Ok(Prepared::new(
                "whatever",
                ToolKind::Read,
                Proposal {
                    summary: format!("{} runs {tool}", self.name),
                    ..Proposal::default()
                },
                Plan::external((tool.to_owned(), arguments)),
            ))
        })
    }

    fn apply<'a>(
        &'a self,
        tool: &'a str,
        plan: Plan,
        _run: Run,
    ) -> ToolFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let (prepared_for, arguments) = plan
                .into_external::<(String, Value)>()
                .ok_or_else(|| ToolError::Internal("not my plan".to_owned()))?;
            Ok(ToolOutput::text(format!(
                "{} applied {tool} (prepared for {prepared_for}) with {arguments}",
                self.name
            )))
        })
    }

    fn summary(&self, tool: &str, _arguments: &Value) -> Option<String> {
        Some(format!("{} · {tool}", self.name))
    }
}

fn names(offer: &Offer) -> Vec<&str> {
    offer.specs().map(|spec| spec.name.as_str()).collect()
}

#[tokio::test]
async fn the_first_source_wins_a_clash_and_the_loser_is_reported() {
    let first = Fake::new(
        "first",
        &[("read", ToolKind::Read), ("shared", ToolKind::Edit)],
    );
    let second = Fake::new(
        "second",
        &[("shared", ToolKind::Mutating), ("own", ToolKind::Mutating)],
    );
    let toolbox = ToolBox::new(vec![first as Arc<dyn ToolSource>, second]);
    let Offered { offer, notices } = toolbox.offer().await;
    assert_eq!(names(&offer), ["read", "shared", "own"]);
    assert_eq!(
        notices,
        ["the second tool `shared` is not offered: a first tool has that name"]
    );
    let prepared = offer.prepare("shared", json!({"x": 1})).await.unwrap();
    assert_eq!(prepared.proposal.summary, "first runs shared");
    // The offer's name and kind, not what the source put there.
    assert_eq!(prepared.tool, "shared");
    assert_eq!(prepared.kind, ToolKind::Edit);
    let output = offer
        .apply("shared", prepared.plan, Run::unattended())
        .await
        .unwrap();
    assert_eq!(
        output.text,
        r#"first applied shared (prepared for shared) with {"x":1}"#
    );
    let own = offer.prepare("own", json!({})).await.unwrap();
    assert_eq!(own.kind, ToolKind::Mutating);
    assert_eq!(offer.summary("own", &json!({})), "second · own");
    assert_eq!(offer.summary("nobody", &json!({})), "nobody");
}

#[tokio::test]
async fn unknown_reserved_and_unacceptable_names_are_refused() {
    let source = Fake::new(
        "custom",
        &[
            ("task", ToolKind::Mutating),
            ("has space", ToolKind::Mutating),
            (&"x".repeat(65), ToolKind::Mutating),
            ("fine-name_2", ToolKind::Mutating),
        ],
    );
    let toolbox = ToolBox::new(vec![source as Arc<dyn ToolSource>]).with_reserved(&["task"]);
    let Offered { offer, notices } = toolbox.offer().await;
    assert_eq!(names(&offer), ["fine-name_2"]);
    assert_eq!(notices.len(), 3, "{notices:?}");
    assert!(
        notices[0].contains("the agent's own tool has that name"),
        "{notices:?}"
    );
    assert!(notices[1].contains("letters, digits"), "{notices:?}");
    assert!(notices[2].contains("longer than 64"), "{notices:?}");
    let error = offer.prepare("task", json!({})).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown tool `task`; the available tools are: fine-name_2"
    );
}

#[tokio::test]
async fn a_notice_is_shown_once_while_it_lasts_and_again_when_it_returns() {
    let source = Fake::new("custom", &[]);
    let toolbox = ToolBox::new(vec![Arc::clone(&source) as Arc<dyn ToolSource>]);
    source.set_notices(&["bad manifest"]);
    assert_eq!(toolbox.offer().await.notices, ["bad manifest"]);
    assert!(toolbox.offer().await.notices.is_empty());
    source.set_notices(&[]);
    assert!(toolbox.offer().await.notices.is_empty());
    source.set_notices(&["bad manifest", "bad manifest"]);
    assert_eq!(toolbox.offer().await.notices, ["bad manifest"]);
}

#[tokio::test]
async fn a_narrowed_offer_refuses_what_it_left_out_and_a_cancelled_run_does_not_apply() {
    let source = Fake::new(
        "s",
        &[("look", ToolKind::Read), ("change", ToolKind::Mutating)],
    );
    let offer = ToolBox::new(vec![source as Arc<dyn ToolSource>])
        .offer()
        .await
        .offer;
    let reads = offer.retain(|spec| spec.kind == ToolKind::Read);
    assert_eq!(names(&reads), ["look"]);
    assert!(matches!(
        reads.prepare("change", json!({})).await,
        Err(ToolError::UnknownTool { .. })
    ));
    let prepared = offer.prepare("change", json!({})).await.unwrap();
    let (sender, receiver) = tokio::sync::watch::channel(true);
    let run = Run {
        cancel: crate::Cancellation::new(receiver),
        sink: None,
    };
    assert!(matches!(
        offer.apply("change", prepared.plan, run).await,
        Err(ToolError::Cancelled { .. })
    ));
    drop(sender);
}
