//! [`ZedService`]: the signed-in Zed account as a backend of the `zed` provider — its model
//! list (cached, read again when a new LLM token was minted) and completions retried before
//! any output by the same [`Retries`] every provider's calls use. Its failures are
//! [`ProviderError`]s, so callers decide, classify and word them as any provider's, and the
//! last one is kept (cleaned, as every upstream's) for the status page.

use std::time::{Duration, Instant};

use corvid_wire::model::{ChatRequest, ErrorKind};
use tokio::sync::Mutex;

use super::{ZedClient, ZedCompletion, ZedModel, ZedModels};
use crate::backoff::Retries;
use crate::error::{CallError, ProviderError, Refusal};
use crate::last_failure::{FailureLog, LastFailure};

/// How long a fetched model list is trusted.
const MODEL_LIST_TTL: Duration = Duration::from_secs(600);

/// A Zed account's client and its model list (kept so each model's own provider is known).
#[derive(Debug)]
pub struct ZedService {
    client: ZedClient,
    /// The list, when it was read, and how many LLM tokens had been minted then.
    models: Mutex<Option<CachedZedModels>>,
    /// Retries of a completion before any output, as for every provider (`max_retries`).
    max_retries: u32,
    /// The account's last failed call (a model list or a completion, after its retries).
    failures: FailureLog,
}

#[derive(Debug)]
struct CachedZedModels {
    at: Instant,
    mints: u64,
    models: ZedModels,
}

impl ZedService {
    pub fn new(client: ZedClient) -> Self {
        Self::with_retries(client, 0)
    }

    /// A service that retries a failed completion up to `max_retries` times before any output.
    pub fn with_retries(client: ZedClient, max_retries: u32) -> Self {
        Self {
            client,
            models: Mutex::new(None),
            max_retries,
            failures: FailureLog::default(),
        }
    }

    pub fn client(&self) -> &ZedClient {
        &self.client
    }

    /// The account's last failed call (from any caller: the gateway, the agent, a model
    /// list), cleaned for showing like every upstream's; `None` when none has.
    pub fn last_failure(&self) -> Option<LastFailure> {
        self.failures.last()
    }

    /// The last failure when no call has succeeded since (see `Upstream::failing`).
    pub fn failing(&self) -> Option<LastFailure> {
        self.failures.current()
    }

    /// The account's models, fetched on demand and cached; read again once a new LLM token
    /// was minted (the list can change with the plan, as Zed re-reads it) or after ten
    /// minutes.
    pub async fn models(&self) -> Result<ZedModels, ProviderError> {
        let mut cache = self.models.lock().await;
        if let Some(cached) = cache.as_ref()
            && cached.at.elapsed() < MODEL_LIST_TTL
            && cached.mints == self.client.llm_tokens_minted()
        {
            return Ok(cached.models.clone());
        }
        let models = match self.client.models().await {
            Ok(models) => {
                self.failures.succeeded();
                models
            }
            Err(error) => {
                let error = ProviderError::from(error);
                self.failures.note(&error);
                return Err(error);
            }
        };
        *cache = Some(CachedZedModels {
            at: Instant::now(),
            // Read after the fetch: the fetch itself may have minted the first token.
            mints: self.client.llm_tokens_minted(),
            models: models.clone(),
        });
        Ok(models)
    }

    /// The cached list, without waiting or fetching (routing asks it synchronously).
    pub(crate) fn cached<T>(&self, read: impl FnOnce(&ZedModels) -> Option<T>) -> Option<T> {
        let cache = self.models.try_lock().ok()?;
        read(&cache.as_ref()?.models)
    }

    /// The model called `id`: Zed's failure when the list cannot be read (a refused sign-in is
    /// a 401 saying to run `corvid login zed`, a 5xx …), or a 404 listing what the account
    /// offers when `id` is not on it.
    pub async fn model(&self, id: &str) -> Result<ZedModel, ProviderError> {
        let models = self.models().await?;
        models.get(id).cloned().ok_or_else(|| {
            let offered: Vec<&str> = models
                .models
                .iter()
                .map(|model| model.id.as_str())
                .collect();
            ProviderError::Refused(Refusal {
                status: http::StatusCode::NOT_FOUND,
                kind: ErrorKind::NotFound,
                code: None,
                message: format!(
                    "your Zed account offers no model `{id}`; it offers: {}",
                    offered.join(", ")
                ),
                retry_after: None,
                retryable: false,
            })
        })
    }

    /// `POST /completions`, retried before any output by the rules every provider's calls
    /// follow ([`Retries`]: what the failure says may be retried — Zed's 5xx, 408, 425, 429 or
    /// `retry_after` —, the backoff or Zed's `retry_after`, a longer wait going back to the
    /// caller, at most `max_retries` times). A `failed` status before the reply's first output
    /// counts as a failed call (an error status for the client, with `Retry-After`), not as a
    /// stream. Returns the completion and the attempts made.
    pub async fn completion(
        &self,
        request: &ChatRequest,
        model: &ZedModel,
    ) -> Result<(ZedCompletion, u32), CallError> {
        let mut retries = Retries::new(self.max_retries);
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let error = match self.client.completion(request, model, None, None).await {
                Ok(mut completion) => match completion.failure_before_output().await {
                    // A `failed` status before any output is a failed call, not a stream.
                    Some(failure) => failure.into_error(self.client.plan()),
                    None => {
                        self.failures.succeeded();
                        return Ok((completion, attempts));
                    }
                },
                Err(error) => error,
            };
            let error = ProviderError::from(error);
            match retries.after(&error) {
                Some(delay) => tokio::time::sleep(delay).await,
                None => {
                    self.failures.note(&error);
                    return Err(CallError { error, attempts });
                }
            }
        }
    }
}
