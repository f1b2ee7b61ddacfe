use corvid_test_support::zed_cloud::fixtures;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::zed::{ZedAccount, ZedModels, ZedOrganization, ZedPlan, ZedProvider};

fn org(id: &str, name: &str, is_personal: bool) -> ZedOrganization {
    ZedOrganization {
        id: id.to_owned(),
        name: name.to_owned(),
        is_personal,
    }
}

#[test]
fn the_account_picks_the_default_organization_and_its_plan() {
    let body = fixtures::users_me("zed_pro_trial", true).to_string();
    let account = ZedAccount::parse(body.as_bytes()).unwrap();
    assert_eq!(
        account,
        ZedAccount {
            user_id: Some(42),
            display_name: "mona".to_owned(),
            organizations: vec![
                org("org_team", "Team", false),
                org("org_personal", "mona", true)
            ],
            organization: Some(org("org_personal", "mona", true)),
            plan: ZedPlan::ProTrial,
            plan_id: Some("zed_pro_trial".to_owned()),
            hosted_models_enabled: true,
            is_account_too_young: false,
            has_overdue_invoices: false,
            trial_started_at: None,
            period_ends_at: Some("2026-02-01T00:00:00Z".to_owned()),
        }
    );
    assert_eq!(
        account.summary(),
        "mona (organization mona, plan Pro Trial)"
    );
}

#[test]
fn without_a_listed_default_the_first_organization_is_used() {
    let mut body = fixtures::users_me("zed_pro", false);
    body["default_organization_id"] = json!("org_gone");
    let account = ZedAccount::parse(body.to_string().as_bytes()).unwrap();
    assert_eq!(account.organization, Some(org("org_team", "Team", false)));
    // The team's plan; its configuration does not say, so hosted models count as on.
    assert_eq!(account.plan, ZedPlan::Business);
    assert!(account.hosted_models_enabled);
}

#[test]
fn hosted_models_can_be_off_and_unknown_plans_are_free() {
    let body = fixtures::users_me("zed_galaxy_brain", false).to_string();
    let account = ZedAccount::parse(body.as_bytes()).unwrap();
    assert_eq!(account.plan, ZedPlan::Free);
    assert_eq!(account.plan_id.as_deref(), Some("zed_galaxy_brain"));
    assert!(!account.hosted_models_enabled);
    assert_eq!(
        account.summary(),
        "mona (organization mona, plan Free, hosted models off)"
    );
}

#[test]
fn an_older_server_body_still_reads() {
    // 2025: no organizations, `user.id`, no GitHub login; an old plan id.
    let body = json!({"user": {"id": 7, "name": "Old Timer"}, "plan": {"plan_v3": "ZedPro"}});
    let account = ZedAccount::parse(body.to_string().as_bytes()).unwrap();
    assert_eq!(account.user_id, Some(7));
    assert_eq!(account.display_name, "Old Timer");
    assert_eq!(account.organization, None);
    assert_eq!(account.plan, ZedPlan::Pro);
    let bare = ZedAccount::parse(b"{}").unwrap();
    assert_eq!(
        (bare.display_name.as_str(), bare.plan),
        ("unknown user", ZedPlan::Free)
    );
}

#[test]
fn plan_ids_and_labels() {
    for (id, plan, label) in [
        ("zed_free", ZedPlan::Free, "Free"),
        ("zed_pro", ZedPlan::Pro, "Pro"),
        ("zed_pro_trial", ZedPlan::ProTrial, "Pro Trial"),
        ("zed_student", ZedPlan::Student, "Student"),
        ("zed_business", ZedPlan::Business, "Business"),
        ("zed_vip", ZedPlan::Vip, "VIP"),
    ] {
        assert_eq!(ZedPlan::from_id(id), plan);
        assert_eq!((plan.id(), plan.label()), (id, label));
    }
    assert_eq!(ZedPlan::from_id("ZedProTrial"), ZedPlan::ProTrial);
    assert_eq!(ZedPlan::from_id("Free"), ZedPlan::Free);
    assert!(!ZedPlan::Free.includes_hosted_models());
}

#[test]
fn models_leave_out_disabled_ones_and_keep_each_provider() {
    let models = ZedModels::parse(fixtures::models().to_string().as_bytes()).unwrap();
    let listed: Vec<(ZedProvider, &str)> = models
        .models
        .iter()
        .map(|model| (model.provider, model.id.as_str()))
        .collect();
    assert_eq!(
        listed,
        vec![
            (ZedProvider::Anthropic, "claude-sonnet-4-6"),
            (ZedProvider::OpenAi, "gpt-5"),
            (ZedProvider::Google, "gemini-2.5-pro"),
            (ZedProvider::XAi, "grok-4"),
        ]
    );
    assert_eq!(models.default_model.as_deref(), Some("claude-sonnet-4-6"));
    // Ids the list does not have are dropped.
    assert_eq!(models.default_fast_model, None);
    assert_eq!(models.recommended_models, vec!["claude-sonnet-4-6"]);
    let sonnet = models.get("models/claude-sonnet-4-6").unwrap();
    assert_eq!(
        (
            sonnet.display_name.as_str(),
            sonnet.max_output_tokens,
            sonnet.supports_tools
        ),
        ("Claude Sonnet 4.6", 64000, true)
    );
    assert_eq!(sonnet.supported_effort_levels[0].value, "high");
}

#[test]
fn models_default_newer_fields_and_skip_unknown_providers() {
    let body = json!({"models": [
        {"provider": "anthropic", "id": "claude-x"},
        {"provider": "mistral", "id": "m-1"},
        {"provider": "baseten", "id": "kimi", "is_disabled": false}
    ]});
    let models = ZedModels::parse(body.to_string().as_bytes()).unwrap();
    let ids: Vec<&str> = models.models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, vec!["claude-x", "kimi"]);
    assert_eq!(models.models[0].display_name, "claude-x");
    assert!(!models.models[0].supports_tools);
    assert_eq!(models.models[1].provider, ZedProvider::Baseten);
    assert_eq!(ZedModels::parse(b"{}").unwrap(), ZedModels::default());
}

#[test]
fn providers_by_name_and_by_guess() {
    for provider in [
        ZedProvider::Anthropic,
        ZedProvider::OpenAi,
        ZedProvider::Google,
        ZedProvider::XAi,
        ZedProvider::Baseten,
    ] {
        assert_eq!(ZedProvider::parse(provider.as_str()), Some(provider));
    }
    assert_eq!(ZedProvider::parse("OpenAi"), None);
    assert_eq!(
        ZedProvider::guess("claude-opus-4-1"),
        Some(ZedProvider::Anthropic)
    );
    assert_eq!(ZedProvider::guess("o3-mini"), Some(ZedProvider::OpenAi));
    assert_eq!(ZedProvider::guess("gpt-5"), Some(ZedProvider::OpenAi));
    assert_eq!(
        ZedProvider::guess("models/gemini-2.5-pro"),
        Some(ZedProvider::Google)
    );
    assert_eq!(ZedProvider::guess("grok-4"), Some(ZedProvider::XAi));
    assert_eq!(ZedProvider::guess("olmo"), None);
}
