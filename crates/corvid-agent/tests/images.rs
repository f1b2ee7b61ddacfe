//! Images in a user's message through the real engine: a `@shot.png` mention attaches the
//! project image (the text keeps the mention), a face's image goes with it, a model without
//! image input is refused before anything is sent, and a reloaded conversation keeps them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_protocol::{
    ApprovalPolicy, ErrorClass, EventMsg, HistoryEntry, ImageInput, Op, SendParams, TurnOutcome,
};
use corvid_test_support::agent::{self, ScriptedAgent};
use corvid_test_support::scripted::ScriptedReply;
use corvid_wire::model::{ChatRequest, ImageSource, Part, Role};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUg==";

/// The first user message's images, as (media type, data).
fn first_user_images(request: &ChatRequest) -> Vec<(String, String)> {
    let user = request
        .messages
        .iter()
        .find(|message| message.role == Role::User)
        .unwrap();
    user.parts
        .iter()
        .filter_map(|part| match part {
            Part::Image(image) => match &image.source {
                ImageSource::Base64 { media_type, data } => {
                    Some((media_type.clone(), data.clone()))
                }
                ImageSource::Url { url } => Some(("url".into(), url.clone())),
            },
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_mentioned_project_image_and_an_attached_one_reach_the_model_and_survive_a_reload() {
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("shot.png"), PNG).unwrap();
    let config = agent::config(project.path(), ApprovalPolicy::Ask);
    let store = || -> corvid_agent::SharedStore {
        let store = corvid_store::Store::open(&data.path().join("corvid.db")).unwrap();
        std::sync::Arc::new(parking_lot::Mutex::new(store))
    };
    let mut agent =
        ScriptedAgent::spawn_on_store(config.clone(), vec![ScriptedReply::text("a crow")], store())
            .await;
    let mut params = SendParams::text("what is in @shot.png?");
    params.images.push(ImageInput::Url {
        url: "https://example.com/b.png".into(),
    });
    agent.session.request(Op::Send(params)).await.unwrap();
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let request = agent.model.requests().remove(0);
    assert_eq!(
        first_user_images(&request),
        [
            ("url".to_owned(), "https://example.com/b.png".to_owned()),
            ("image/png".to_owned(), PNG_BASE64.to_owned()),
        ]
    );
    let text: String = request.messages[0]
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "what is in @shot.png?", "the text keeps the mention");
    agent.shut_down().await;
    drop(agent);

    // Reopened: the view marks where the images were, the model still gets them.
    let mut again =
        ScriptedAgent::spawn_on_store(config, vec![ScriptedReply::text("still a crow")], store())
            .await;
    let mut view = again.session.subscribe_ready().await;
    let history = loop {
        let event = agent::next_event(&mut view, std::time::Duration::from_secs(20)).await;
        if let EventMsg::ConversationOpened { history, .. } = event.msg {
            break history;
        }
    };
    assert_eq!(
        history[0],
        HistoryEntry::User {
            text: "what is in @shot.png?\n[image] [image]".to_owned()
        }
    );
    again.send("and now?");
    assert_eq!(again.turn_finished().await, TurnOutcome::Completed);
    assert_eq!(
        first_user_images(&again.model.requests()[0]).len(),
        2,
        "the stored message keeps its images"
    );
}

#[tokio::test]
async fn a_model_without_image_input_is_refused_and_nothing_is_sent() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("shot.png"), PNG).unwrap();
    let mut config = agent::config(project.path(), ApprovalPolicy::Ask);
    // The catalog says grok-3 reads text only.
    config.model = "grok-3".into();
    let agent = ScriptedAgent::spawn(config, vec![ScriptedReply::text("unused")]).await;
    let refused = agent
        .session
        .request(Op::Send(SendParams::text("look at @shot.png")))
        .await
        .unwrap_err();
    assert_eq!(refused.class, ErrorClass::InvalidRequest);
    assert!(
        refused
            .message
            .starts_with("grok-3 does not take images; pick one that does, e.g. "),
        "{}",
        refused.message
    );

    // Text alone still goes to the same model; a file that is not there is only words.
    agent
        .session
        .request(Op::Send(SendParams::text("draw @gone.png")))
        .await
        .unwrap();
    let mut agent = agent;
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let requests = agent.model.requests();
    assert_eq!(requests.len(), 1);
    assert!(first_user_images(&requests[0]).is_empty());
}
