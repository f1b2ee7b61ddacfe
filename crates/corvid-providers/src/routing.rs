//! Between resolving a model and calling a provider sits a route ([`Plan`]): the targets to try
//! in order (a `[routes.NAME]` list, or the one model), each with its keys in the pool's
//! order; the task rule that picked them, if one did; and the target and key that began the
//! conversation, tried first while it works (stickiness: provider caches stay warm and opaque
//! reasoning stays readable).
//!
//! The plan only orders; the caller sends — one `prepare` + `send` per attempt, the next only
//! when the last failed before any output in a way another target could fix
//! ([`crate::fails_over`]).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use corvid_config::RoutingConfig;
use corvid_wire::model::{ChatRequest, Part, ReasoningConfig, ToolResultContent};

use crate::error::RouteError;
use crate::registry::{Registry, Route};

/// Logs a configured name without control characters.
struct Clean<'a>(&'a str);

impl std::fmt::Display for Clean<'_> {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        out.write_str(&self.0.escape_debug().to_string())
    }
}

/// What the task rules look at in a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestShape {
    /// Thinking or reasoning was asked for.
    pub thinking: bool,
    /// corvid's estimate of the prompt, in tokens.
    pub estimated_tokens: u64,
    /// An image is in the conversation.
    pub images: bool,
    /// A web search tool is offered.
    pub web_search: bool,
}

impl RequestShape {
    /// The shape of a decoded request.
    pub fn of(request: &ChatRequest) -> Self {
        let thinking = matches!(
            request.params.reasoning,
            Some(ReasoningConfig::Budget(_) | ReasoningConfig::Effort(_))
        ) && !matches!(
            request.params.reasoning,
            Some(ReasoningConfig::Effort(corvid_wire::model::Effort::None))
        );
        let images = request.messages.iter().any(|message| {
            message.parts.iter().any(|part| match part {
                Part::Image(_) => true,
                Part::ToolResult(result) => result
                    .content
                    .iter()
                    .any(|content| matches!(content, ToolResultContent::Image(_))),
                _ => false,
            })
        });
        let search_name = |name: &str| {
            let name = name.to_ascii_lowercase();
            name.contains("web_search") || name.contains("websearch")
        };
        let web_search = request.tools.iter().any(|tool| search_name(&tool.name))
            || request.extra.get("tools").is_some_and(|tools| {
                let text = tools.to_string().to_ascii_lowercase();
                text.contains("web_search") || text.contains("google_search")
            });
        Self {
            thinking,
            estimated_tokens: corvid_wire::anthropic::count_tokens_estimate(request),
            images,
            web_search,
        }
    }
}

/// The route one request takes.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Each attempt's target and key, in order.
    pub attempts: Vec<Route>,
    /// The task rule that chose the target (`background`, `think`, `long_context`, `image`,
    /// `web_search`), if one did.
    pub rule: Option<&'static str>,
    /// The `[routes.NAME]` the request went through, if any.
    pub route: Option<String>,
    /// Targets left out, and why (not set up, unknown), for explanations.
    pub skipped: Vec<(String, RouteError)>,
    /// The provider that began this conversation, when it is known and is not the first
    /// attempt's (opaque reasoning from it must be settled as a moved session's is).
    pub began_on: Option<String>,
    /// The pool key that began it, with `began_on`.
    pub began_key: Option<usize>,
    /// Whether the first attempt is the conversation's own target (stickiness held).
    pub sticky: bool,
}

/// How a conversation reached an attempt's target from where it began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved<'a> {
    /// To another provider than the one named here.
    Provider(&'a str),
    /// To another key of the same provider, whose account cannot read what this key's sealed.
    Key(usize),
}

impl Plan {
    /// Whether the conversation moved to `route` from where it began (then its opaque
    /// reasoning must be settled, and a request cannot pass through as it is).
    pub fn moved(&self, route: &Route) -> Option<Moved<'_>> {
        let began_on = self.began_on.as_deref()?;
        if began_on != route.provider.name() {
            return Some(Moved::Provider(began_on));
        }
        self.began_key
            .filter(|key| {
                *key != route.key && crate::quirks::reasoning_bound_to_key(&route.provider)
            })
            .map(Moved::Key)
    }

    /// After attempt `index` failed before any output with `error`: rests that attempt's key
    /// when the error says so, and says whether the next attempt is to be tried — there is
    /// one, `deadline` has not passed since `started`, and another target could fix it. The
    /// one failover rule of the gateway and the agent's in-process calls.
    pub fn fails_over_after(
        &self,
        index: usize,
        error: &crate::ProviderError,
        started: std::time::Instant,
        deadline: Duration,
    ) -> bool {
        let Some(route) = self.attempts.get(index) else {
            return false;
        };
        if let Some(wait) = crate::rests_key(error) {
            route.provider.keys().rest(route.key, wait);
        }
        let fails_over = index + 1 < self.attempts.len()
            && started.elapsed() < deadline
            && crate::fails_over(error);
        if fails_over {
            tracing::warn!(
                failed = %Clean(&route.target()),
                next = %Clean(&self.attempts[index + 1].target()),
                status = error.status_code(),
                "a route target failed before any output; trying the next"
            );
        }
        fails_over
    }

    /// Settles `request`'s opaque reasoning for `route` when the conversation moved there, as
    /// a user-moved session's is.
    pub fn settle_move(&self, route: &Route, request: &mut ChatRequest) {
        match self.moved(route) {
            Some(Moved::Provider(origin)) => corvid_wire::minted::adopt(request, origin),
            Some(Moved::Key(began_key)) => {
                use crate::quirks::key_origin;
                let name = route.provider.name();
                // What the old key got straight (a pass-through) is marked as its own; then
                // all opaque values but the new key's — whether passed through or minted by a
                // translation under the provider's name — are settled away.
                corvid_wire::minted::adopt(request, &key_origin(name, began_key));
                corvid_wire::minted::settle(request, &key_origin(name, route.key));
            }
            None => {}
        }
    }
}

/// Where each conversation began: target and key, by a hash of the conversation.
#[derive(Debug, Default)]
pub(crate) struct StickyTable {
    entries: Mutex<HashMap<u64, Stuck>>,
}

#[derive(Debug, Clone)]
struct Stuck {
    provider: String,
    model: String,
    key: usize,
    at: Instant,
}

/// Conversations remembered; past this the oldest are forgotten.
const STICKY_CAPACITY: usize = 4096;
/// A conversation left this long begins afresh (provider caches are cold by then anyway).
const STICKY_TTL: Duration = Duration::from_secs(6 * 3600);

impl StickyTable {
    fn get(&self, conversation: u64) -> Option<Stuck> {
        let entries = self.lock();
        entries
            .get(&conversation)
            .filter(|stuck| stuck.at.elapsed() < STICKY_TTL)
            .cloned()
    }

    fn set(&self, conversation: u64, route: &Route) {
        let mut entries = self.lock();
        if entries.len() >= STICKY_CAPACITY && !entries.contains_key(&conversation) {
            entries.retain(|_, stuck| stuck.at.elapsed() < STICKY_TTL);
            if entries.len() >= STICKY_CAPACITY
                && let Some(oldest) = entries
                    .iter()
                    .min_by_key(|(_, stuck)| stuck.at)
                    .map(|(key, _)| *key)
            {
                entries.remove(&oldest);
            }
        }
        entries.insert(
            conversation,
            Stuck {
                provider: route.provider.name().to_owned(),
                model: route.model.clone(),
                key: route.key,
                at: Instant::now(),
            },
        );
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, HashMap<u64, Stuck>> {
        self.entries.lock()
    }
}

impl Registry {
    /// The routing configuration.
    pub fn routing(&self) -> &RoutingConfig {
        &self.routing
    }

    /// The plan for `requested` (see the module docs): a task rule may replace the name when
    /// `shape` is given; a route name expands into its targets; each target's keys follow in
    /// the pool's order; the conversation's own target and key go first while they work.
    /// Fails only when no target can be used, with the first target's reason.
    pub fn plan(
        &self,
        requested: &str,
        shape: Option<&RequestShape>,
        conversation: Option<u64>,
    ) -> Result<Plan, RouteError> {
        let requested = requested.trim();
        let name = if requested.is_empty() {
            self.default_model().to_owned()
        } else {
            requested.to_owned()
        };
        let stuck = conversation
            .filter(|_| self.routing.sticky)
            .and_then(|conversation| self.sticky.get(conversation));
        // The first firing rule whose target can be used; else the request goes where it
        // asked (a rule's target not set up must not break the requests it catches).
        let mut rule = None;
        let mut planned = None;
        for (rule_name, target) in shape
            .map(|shape| self.rules_for(&name, shape))
            .unwrap_or_default()
        {
            let found = self.targets(&target, stuck.as_ref());
            if !found.1.is_empty() {
                tracing::debug!(rule = rule_name, target = %Clean(&target), "a task rule chose the target");
                rule = Some(rule_name);
                planned = Some(found);
                break;
            }
            tracing::warn!(
                rule = rule_name,
                "a task rule's target is not available; skipping it"
            );
        }
        let (route, mut attempts, skipped) =
            planned.unwrap_or_else(|| self.targets(&name, stuck.as_ref()));
        if attempts.is_empty() {
            return Err(skipped
                .into_iter()
                .next()
                .map(|(_, error)| error)
                .unwrap_or_else(|| RouteError::UnknownModel {
                    model: requested.to_owned(),
                    available: Vec::new(),
                }));
        }
        let mut sticky = false;
        let mut began_on = None;
        let mut began_key = None;
        if let Some(stuck) = &stuck {
            let own = attempts.iter().position(|attempt| {
                attempt.provider.name() == stuck.provider
                    && attempt.model == stuck.model
                    && attempt.key == stuck.key
                    && !attempt.provider.keys().is_resting(attempt.key)
            });
            if let Some(own) = own {
                let first = attempts.remove(own);
                attempts.insert(0, first);
                sticky = true;
            }
            began_on = Some(stuck.provider.clone());
            began_key = Some(stuck.key);
        }
        // A retryable failure moves to the next target at once rather than being retried
        // here first; the last target, and a key followed only by another key of the same
        // target, keep the provider's own retries.
        for index in 0..attempts.len() {
            let next_is_elsewhere = attempts.get(index + 1).is_some_and(|next| {
                next.provider.name() != attempts[index].provider.name()
                    || next.model != attempts[index].model
            });
            attempts[index].retry_in_place = !next_is_elsewhere;
        }
        Ok(Plan {
            attempts,
            rule,
            route,
            skipped,
            began_on,
            began_key,
            sticky,
        })
    }

    /// Where `requested` leads first — a route name's first usable target, else the model an
    /// alias or name resolves to — for describing a model (its window, its facts, the
    /// provider a ledger row names), not for sending: a request follows its whole [`Plan`].
    pub fn lead(&self, requested: &str) -> Result<Route, RouteError> {
        let mut plan = self.plan(requested, None, None)?;
        // A plan always holds an attempt (`plan` fails otherwise).
        Ok(plan.attempts.swap_remove(0))
    }

    /// Whether any request may have more than one place to go (routes, task rules, a key
    /// pool): only then are conversations and request shapes read.
    pub fn has_choices(&self) -> bool {
        !self.routing.routes.is_empty()
            || self.routing.rules.any()
            || self
                .providers()
                .iter()
                .any(|provider| provider.keys().len() > 1)
    }

    /// The attempts for `name` (a route name, alias or model): the route's name if it is
    /// one, each usable target's keys in order, and the targets left out.
    fn targets(
        &self,
        name: &str,
        stuck: Option<&Stuck>,
    ) -> (Option<String>, Vec<Route>, Vec<(String, RouteError)>) {
        let name = self.aliases().get(name).map(String::as_str).unwrap_or(name);
        let route = self.routing.routes.get(name).map(|_| name.to_owned());
        let targets = match self.routing.routes.get(name) {
            Some(route) => route.targets.clone(),
            None => vec![name.to_owned()],
        };
        let mut attempts = Vec::new();
        let mut skipped = Vec::new();
        for target in &targets {
            match self.resolve(target) {
                Ok(route) => {
                    let preferred = stuck
                        .filter(|stuck| {
                            stuck.provider == route.provider.name() && stuck.model == route.model
                        })
                        .map(|stuck| stuck.key);
                    for key in route.provider.keys().order(preferred) {
                        attempts.push(Route {
                            key,
                            ..route.clone()
                        });
                    }
                }
                Err(error) => skipped.push((target.clone(), error)),
            }
        }
        (route, attempts, skipped)
    }

    /// Notes that `conversation` is served by `route` (the next turns go there first).
    pub fn stick(&self, conversation: u64, route: &Route) {
        if self.routing.sticky {
            self.sticky.set(conversation, route);
        }
    }

    /// The task rules whose shape the request has, with their targets, in order: long
    /// context (it must fit somewhere), background, web search, image, thinking.
    fn rules_for(&self, requested: &str, shape: &RequestShape) -> Vec<(&'static str, String)> {
        let rules = &self.routing.rules;
        let background = requested.to_ascii_lowercase().contains("haiku");
        [
            (
                "long_context",
                &rules.long_context,
                shape.estimated_tokens > rules.long_context_threshold,
            ),
            ("background", &rules.background, background),
            ("web_search", &rules.web_search, shape.web_search),
            ("image", &rules.image, shape.images),
            ("think", &rules.think, shape.thinking),
        ]
        .into_iter()
        .filter_map(|(rule, target, fires)| {
            target
                .as_ref()
                .filter(|_| fires)
                .map(|target| (rule, target.clone()))
        })
        .collect()
    }
}

/// A conversation's key: the client's session id where it sends one, else a hash of the
/// model it asked for and the conversation's first turn (the same on every later turn).
pub fn conversation_key(session: Option<&[u8]>, requested: &str, first_turn: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    match session {
        Some(session) => {
            "session".hash(&mut hasher);
            session.hash(&mut hasher);
        }
        None => {
            requested.hash(&mut hasher);
            first_turn.hash(&mut hasher);
        }
    }
    hasher.finish()
}

#[cfg(test)]
mod tests;
