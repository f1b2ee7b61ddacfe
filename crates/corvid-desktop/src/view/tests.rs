use super::*;

fn up() -> Health {
    Health {
        address: Some("127.0.0.1:8787".parse().unwrap()),
        gateway_up: true,
        page: true,
        ..Health::starting()
    }
}

fn labels(view: &TrayView) -> Vec<String> {
    view.entries
        .iter()
        .filter_map(|entry| match entry {
            Entry::Info(text) => Some(text.clone()),
            Entry::Item { label, .. } => Some(label.clone()),
            Entry::Separator => None,
        })
        .collect()
}

fn item(view: &TrayView, wanted: Action) -> (bool, Option<bool>) {
    view.entries
        .iter()
        .find_map(|entry| match entry {
            Entry::Item {
                action,
                enabled,
                checked,
                ..
            } if *action == wanted => Some((*enabled, *checked)),
            _ => None,
        })
        .unwrap()
}

#[test]
fn a_healthy_gateway_is_plain_corvid_with_every_action() {
    let view = up().view();
    assert_eq!(view.level, Level::Ok);
    assert_eq!(view.title, "corvid");
    assert_eq!(view.icon_name, "network-server");
    assert_eq!(
        labels(&view),
        [
            "Gateway: running on 127.0.0.1:8787",
            "Open chat",
            "Settings…",
            "Sign in to xAI (SuperGrok)…",
            "Sign in to Zed…",
            "Copy Zed settings",
            "Start at login",
            "Quit",
        ]
    );
    assert_eq!(view.tooltip, "Gateway: running on 127.0.0.1:8787");
    assert_eq!(item(&view, Action::OpenChat), (true, None));
    assert_eq!(item(&view, Action::StartAtLogin), (true, Some(false)));
}

#[test]
fn a_failing_provider_warns_in_the_title_the_status_and_a_line_of_its_own() {
    let mut health = up();
    health.failing.push(Failing {
        provider: "xai".to_owned(),
        reason: "502 bad gateway".to_owned(),
    });
    let view = health.view();
    assert_eq!(view.level, Level::Warning);
    assert_eq!(view.title, "corvid: xai failing");
    assert_eq!(view.icon_name, "dialog-warning");
    let labels = labels(&view);
    assert_eq!(labels[0], "Gateway: running on 127.0.0.1:8787; xai failing");
    assert_eq!(labels[1], "xai: 502 bad gateway");
    assert!(view.tooltip.ends_with("\nxai: 502 bad gateway"));
}

#[test]
fn a_gateway_that_does_not_answer_is_down_whatever_the_providers_say() {
    let mut health = up();
    health.gateway_up = false;
    health.failing.push(Failing {
        provider: "xai".to_owned(),
        reason: "timeout".to_owned(),
    });
    let view = health.view();
    assert_eq!(view.level, Level::Down);
    assert_eq!(view.title, "corvid: gateway down");
    assert_eq!(view.icon_name, "network-offline");
    assert_eq!(
        labels(&view)[0],
        "Gateway: down (not answering on 127.0.0.1:8787)"
    );
}

#[test]
fn starting_and_stopping_say_so_and_stopping_offers_nothing_that_needs_the_gateway() {
    let starting = Health::starting().view();
    assert_eq!(starting.title, "corvid: starting");
    assert_eq!(item(&starting, Action::OpenChat), (false, None));

    let mut stopping = up();
    stopping.stopping = true;
    let view = stopping.view();
    assert_eq!(view.title, "corvid: stopping");
    assert_eq!(labels(&view)[0], "Gateway: stopping");
    for action in [Action::OpenChat, Action::SignInXai, Action::Quit] {
        assert_eq!(item(&view, action), (false, None), "{action:?}");
    }
    assert_eq!(item(&view, Action::CopyZedSettings), (true, None));
}

#[test]
fn without_the_page_chat_and_settings_are_off_and_a_note_is_shown() {
    let mut health = up();
    health.page = false;
    health.starts_at_login = true;
    health.note = Some("Copied the Zed settings".to_owned());
    let view = health.view();
    assert_eq!(item(&view, Action::OpenChat), (false, None));
    assert_eq!(item(&view, Action::Settings), (false, None));
    assert_eq!(item(&view, Action::StartAtLogin), (true, Some(true)));
    assert_eq!(labels(&view)[1], "Copied the Zed settings");
}
