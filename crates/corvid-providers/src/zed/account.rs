//! `GET /client/users/me`: the account, its organizations and plan (reference §3.2, §8).
//!
//! Every field has a default: older servers lack the organization fields and name the user by
//! `user.id` instead of `legacy_user_id`; unknown fields are ignored.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::error::ACCOUNT_URL;

/// A Zed plan. Unknown ids count as [`ZedPlan::Free`], as Zed reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZedPlan {
    Free,
    Pro,
    ProTrial,
    Student,
    Business,
    Vip,
}

impl ZedPlan {
    /// Reads a plan id (`zed_pro`…, or the older `Free`, `ZedPro`, `ZedProTrial`).
    pub fn from_id(id: &str) -> Self {
        match id {
            "zed_pro" | "ZedPro" => Self::Pro,
            "zed_pro_trial" | "ZedProTrial" => Self::ProTrial,
            "zed_student" => Self::Student,
            "zed_business" => Self::Business,
            "zed_vip" => Self::Vip,
            _ => Self::Free,
        }
    }

    /// The wire id.
    pub fn id(self) -> &'static str {
        match self {
            Self::Free => "zed_free",
            Self::Pro => "zed_pro",
            Self::ProTrial => "zed_pro_trial",
            Self::Student => "zed_student",
            Self::Business => "zed_business",
            Self::Vip => "zed_vip",
        }
    }

    /// The name a person knows it by.
    pub fn label(self) -> &'static str {
        match self {
            Self::Free => "Free",
            Self::Pro => "Pro",
            Self::ProTrial => "Pro Trial",
            Self::Student => "Student",
            Self::Business => "Business",
            Self::Vip => "VIP",
        }
    }

    /// Whether the plan includes Zed's hosted models at all.
    pub fn includes_hosted_models(self) -> bool {
        !matches!(self, Self::Free)
    }

    /// What to do when Zed answers 402 on this plan.
    pub(crate) fn payment_advice(self) -> String {
        match self {
            Self::Free => format!(
                "it does not include Zed's hosted models; upgrade to Zed Pro (or start the Pro \
                 trial) at {ACCOUNT_URL}"
            ),
            Self::ProTrial => format!(
                "the trial's credit is used up or the trial has ended; subscribe to Zed Pro at \
                 {ACCOUNT_URL}"
            ),
            Self::Pro | Self::Vip => format!(
                "the monthly credit or your spending limit is used up; raise the spending limit \
                 at {ACCOUNT_URL} or wait for the next billing period"
            ),
            Self::Student => format!(
                "the monthly credit is used up or this model is not included in the Student \
                 plan; pick another model, wait for the next period, or see {ACCOUNT_URL}"
            ),
            Self::Business => "the organization's spending limit is reached or its hosted models \
                 are turned off; ask the organization's administrator"
                .to_owned(),
        }
    }
}

/// An organization of the account.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ZedOrganization {
    pub id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub is_personal: bool,
}

/// The account as corvid uses it: who, which organization, which plan, whether hosted models
/// are on. Never holds a token.
#[derive(Debug, Clone, PartialEq)]
pub struct ZedAccount {
    /// The numeric user id (`legacy_user_id`, else `user.id`).
    pub user_id: Option<u64>,
    /// GitHub login, else username, else name, else id.
    pub display_name: String,
    pub organizations: Vec<ZedOrganization>,
    /// The organization requests run under: the default one when listed, else the first.
    pub organization: Option<ZedOrganization>,
    /// That organization's plan, else the account's.
    pub plan: ZedPlan,
    /// The plan id as Zed sent it (for display when it is one corvid does not know).
    pub plan_id: Option<String>,
    /// `is_zed_model_provider_enabled` of the organization (true when Zed does not say).
    pub hosted_models_enabled: bool,
    /// Zed refuses hosted models to very new personal accounts.
    pub is_account_too_young: bool,
    pub has_overdue_invoices: bool,
    /// RFC 3339, when on a trial.
    pub trial_started_at: Option<String>,
    /// RFC 3339, the end of the current subscription period.
    pub period_ends_at: Option<String>,
}

impl ZedAccount {
    /// Reads a `/client/users/me` body.
    pub fn parse(body: &[u8]) -> Result<Self, serde_json::Error> {
        let me: MeWire = serde_json::from_slice(body)?;
        Ok(me.into_account())
    }

    /// One line for `corvid status`: `mona (organization mona, plan Pro)`.
    pub fn summary(&self) -> String {
        let organization = self
            .organization
            .as_ref()
            .map(|org| format!("organization {}, ", org.name))
            .unwrap_or_default();
        let models = if self.hosted_models_enabled {
            ""
        } else {
            ", hosted models off"
        };
        format!(
            "{} ({organization}plan {}{models})",
            self.display_name,
            self.plan.label()
        )
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MeWire {
    user: UserWire,
    organizations: Vec<ZedOrganization>,
    default_organization_id: Option<String>,
    plans_by_organization: HashMap<String, String>,
    configuration_by_organization: HashMap<String, OrganizationConfigWire>,
    plan: PlanWire,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct UserWire {
    id: Option<Value>,
    legacy_user_id: Option<u64>,
    id_v2: Option<String>,
    username: Option<String>,
    github_login: Option<String>,
    name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OrganizationConfigWire {
    is_zed_model_provider_enabled: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PlanWire {
    plan_v3: Option<String>,
    subscription_period: Option<PeriodWire>,
    trial_started_at: Option<String>,
    is_account_too_young: bool,
    has_overdue_invoices: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PeriodWire {
    ended_at: Option<String>,
}

impl MeWire {
    fn into_account(self) -> ZedAccount {
        let user_id = self
            .user
            .legacy_user_id
            .or_else(|| self.user.id.as_ref().and_then(Value::as_u64));
        let non_empty = |value: &Option<String>| value.clone().filter(|text| !text.is_empty());
        let display_name = non_empty(&self.user.github_login)
            .or_else(|| non_empty(&self.user.username))
            .or_else(|| non_empty(&self.user.name))
            .or_else(|| user_id.map(|id| id.to_string()))
            .or_else(|| non_empty(&self.user.id_v2))
            .unwrap_or_else(|| "unknown user".to_owned());
        let organization = self
            .default_organization_id
            .as_ref()
            .and_then(|id| self.organizations.iter().find(|org| &org.id == id))
            .or_else(|| self.organizations.first())
            .cloned();
        let plan_id = organization
            .as_ref()
            .and_then(|org| self.plans_by_organization.get(&org.id).cloned())
            .or_else(|| self.plan.plan_v3.clone());
        let hosted_models_enabled = organization
            .as_ref()
            .and_then(|org| self.configuration_by_organization.get(&org.id))
            .and_then(|config| config.is_zed_model_provider_enabled)
            .unwrap_or(true);
        let personal = organization.as_ref().is_none_or(|org| org.is_personal);
        ZedAccount {
            user_id,
            display_name,
            plan: plan_id.as_deref().map_or(ZedPlan::Free, ZedPlan::from_id),
            plan_id,
            organization,
            organizations: self.organizations,
            hosted_models_enabled,
            is_account_too_young: self.plan.is_account_too_young && personal,
            has_overdue_invoices: self.plan.has_overdue_invoices,
            trial_started_at: self.plan.trial_started_at,
            period_ends_at: self
                .plan
                .subscription_period
                .and_then(|period| period.ended_at),
        }
    }
}
