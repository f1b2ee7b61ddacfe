//! The agent's conversations on PostgreSQL (schema step 4): the [`ConversationStore`] every
//! instance of a team shares, so a conversation written through one is listed and opened
//! through another.
//!
//! The trait is blocking (the agent calls it from its blocking threads), so each method runs
//! its statements on the runtime of the handle it was built with. The agent's own model calls
//! go to the shared ledger (`usage_events`) like the gateway's.

use std::future::Future;

use tokio::runtime::Handle;
use tokio_postgres::Row;

use super::{PgLedger, PgStore};
use crate::{
    CheckpointRecord, ConversationStore, ConversationSummary, StoreError, StoredMessage, Tokens,
    UsageRecord, UsageRow, UsageTotals,
};

/// The agent's store on PostgreSQL.
#[derive(Debug)]
pub struct PgConversations {
    store: PgStore,
    handle: Handle,
    ledger: PgLedger,
}

/// The summary columns, in the order [`summary`] reads them.
const SUMMARY: &str = "SELECT c.id, c.title, c.model, c.created_at, c.updated_at,
        (SELECT count(*) FROM conversation_messages m WHERE m.conversation_id = c.id)
    FROM conversations c";

/// Makes `$2` the current conversation of the project `$1`.
const MAKE_CURRENT: &str = "INSERT INTO project_state (project, current_conversation)
    VALUES ($1, $2)
    ON CONFLICT (project) DO UPDATE SET current_conversation = excluded.current_conversation";

/// The aggregate columns of the usage reports, in the order [`aggregate`] reads them.
const AGGREGATES: &str = "count(*)::bigint,
    count(*) FILTER (WHERE outcome IN ('error', 'stream_error'))::bigint,
    COALESCE(sum(input), 0)::bigint, COALESCE(sum(cache_read), 0)::bigint,
    COALESCE(sum(cache_write), 0)::bigint, COALESCE(sum(output), 0)::bigint,
    COALESCE(sum(reasoning), 0)::bigint";

impl PgConversations {
    /// The agent's store over `store`, its statements run on `handle`'s runtime. The schema is
    /// not checked here: `corvid serve` checks it once at start.
    pub fn new(store: PgStore, handle: Handle) -> Self {
        let ledger = PgLedger::new(store.clone(), handle.clone());
        Self {
            store,
            handle,
            ledger,
        }
    }

    /// Runs `work` to completion on the runtime (from a blocking thread, never an async one).
    fn run<T>(&self, work: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
        self.handle.block_on(work)
    }
}

fn now_secs() -> i64 {
    crate::now_ms() / 1000
}

fn summary(row: &Row) -> ConversationSummary {
    ConversationSummary {
        id: row.get(0),
        title: row.get(1),
        model: row.get(2),
        created_at: row.get(3),
        updated_at: row.get(4),
        message_count: u64::try_from(row.get::<_, i64>(5)).unwrap_or(0),
    }
}

fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// Requests, errors and tokens from the [`AGGREGATES`] columns starting at `first`.
fn aggregate(row: &Row, first: usize) -> (u64, u64, Tokens) {
    let at = |offset: usize| count(row.get::<_, i64>(first + offset));
    (
        at(0),
        at(1),
        Tokens {
            input: at(2),
            cache_read: at(3),
            cache_write: at(4),
            output: at(5),
            reasoning: at(6),
        },
    )
}

fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Inserts `messages` numbered after `seq` (the caller's transaction); returns the last seq.
async fn insert_messages(
    tx: &tokio_postgres::Transaction<'_>,
    id: &str,
    mut seq: i64,
    messages: &[(&str, &str)],
    now: i64,
) -> Result<i64, StoreError> {
    let (mut seqs, mut roles, mut contents) = (Vec::new(), Vec::new(), Vec::new());
    for (role, content) in messages {
        seq += 1;
        seqs.push(seq);
        roles.push(*role);
        contents.push(*content);
    }
    tx.execute(
        "INSERT INTO conversation_messages (conversation_id, seq, role, content, created_at)
         SELECT $1, s, r, c, $5 FROM unnest($2::bigint[], $3::text[], $4::text[]) AS m (s, r, c)",
        &[&id, &seqs, &roles, &contents, &now],
    )
    .await?;
    tx.execute(
        "UPDATE conversations SET updated_at = $2 WHERE id = $1",
        &[&id, &now],
    )
    .await?;
    Ok(seq)
}

impl ConversationStore for PgConversations {
    fn create_conversation(
        &mut self,
        project: &str,
        model: Option<&str>,
    ) -> Result<String, StoreError> {
        let id = format!("c_{}", &crate::team::new_request_id()[..16]);
        let now = now_secs();
        self.run(async {
            let mut client = self.store.client().await?;
            let tx = client.transaction().await?;
            tx.execute(
                "INSERT INTO conversations (id, project, model, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $4)",
                &[&id, &project, &model, &now],
            )
            .await?;
            tx.execute(MAKE_CURRENT, &[&project, &id]).await?;
            tx.commit().await?;
            Ok(id)
        })
    }

    fn list_conversations(&self, project: &str) -> Result<Vec<ConversationSummary>, StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            let sql = format!(
                "{SUMMARY} WHERE c.project = $1 ORDER BY c.updated_at DESC, c.created_seq DESC"
            );
            let rows = client.query(&sql, &[&project]).await?;
            Ok(rows.iter().map(summary).collect())
        })
    }

    fn conversation(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<ConversationSummary>, StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            let sql = format!("{SUMMARY} WHERE c.project = $1 AND c.id = $2");
            let row = client.query_opt(&sql, &[&project, &id]).await?;
            Ok(row.as_ref().map(summary))
        })
    }

    fn current_conversation(&self, project: &str) -> Result<Option<String>, StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            let row = client
                .query_opt(
                    "SELECT current_conversation FROM project_state WHERE project = $1",
                    &[&project],
                )
                .await?;
            Ok(row.and_then(|row| row.get::<_, Option<String>>(0)))
        })
    }

    fn switch_conversation(&mut self, project: &str, id: &str) -> Result<bool, StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            // One statement: the conversation cannot vanish between the check and the switch.
            let switched = client
                .execute(
                    "INSERT INTO project_state (project, current_conversation)
                     SELECT $1, id FROM conversations WHERE id = $2 AND project = $1
                     ON CONFLICT (project)
                     DO UPDATE SET current_conversation = excluded.current_conversation",
                    &[&project, &id],
                )
                .await?;
            Ok(switched > 0)
        })
    }

    fn delete_conversation(&mut self, project: &str, id: &str) -> Result<bool, StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            let deleted = client
                .execute(
                    "DELETE FROM conversations WHERE id = $1 AND project = $2",
                    &[&id, &project],
                )
                .await?;
            Ok(deleted > 0)
        })
    }

    fn clear_conversation(&mut self, id: &str) -> Result<(), StoreError> {
        self.run(async {
            let mut client = self.store.client().await?;
            let tx = client.transaction().await?;
            tx.execute(
                "DELETE FROM conversation_messages WHERE conversation_id = $1",
                &[&id],
            )
            .await?;
            tx.execute(
                "DELETE FROM conversation_steps WHERE conversation_id = $1",
                &[&id],
            )
            .await?;
            tx.execute(
                "UPDATE conversations SET title = '', updated_at = $2 WHERE id = $1",
                &[&id, &now_secs()],
            )
            .await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn set_title(&mut self, id: &str, title: &str) -> Result<(), StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            client
                .execute(
                    "UPDATE conversations SET title = $2 WHERE id = $1",
                    &[&id, &title],
                )
                .await?;
            Ok(())
        })
    }

    fn set_conversation_model(&mut self, id: &str, model: &str) -> Result<(), StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            client
                .execute(
                    "UPDATE conversations SET model = $2 WHERE id = $1",
                    &[&id, &model],
                )
                .await?;
            Ok(())
        })
    }

    fn append_messages(&mut self, id: &str, messages: &[(&str, &str)]) -> Result<i64, StoreError> {
        self.run(async {
            let mut client = self.store.client().await?;
            let tx = client.transaction().await?;
            // The conversation's row locked first: two instances appending to one conversation
            // number their messages one after the other, never the same seq twice.
            tx.execute(
                "SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE",
                &[&id],
            )
            .await?;
            let last: i64 = tx
                .query_one(
                    "SELECT COALESCE(max(seq), 0)::bigint FROM conversation_messages
                     WHERE conversation_id = $1",
                    &[&id],
                )
                .await?
                .get(0);
            let seq = insert_messages(&tx, id, last, messages, now_secs()).await?;
            tx.commit().await?;
            Ok(seq)
        })
    }

    fn replace_messages(
        &mut self,
        conversation: &str,
        messages: &[(&str, &str)],
    ) -> Result<i64, StoreError> {
        self.run(async {
            let mut client = self.store.client().await?;
            let tx = client.transaction().await?;
            tx.execute(
                "SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE",
                &[&conversation],
            )
            .await?;
            tx.execute(
                "DELETE FROM conversation_messages WHERE conversation_id = $1",
                &[&conversation],
            )
            .await?;
            let seq = insert_messages(&tx, conversation, 0, messages, now_secs()).await?;
            tx.commit().await?;
            Ok(seq)
        })
    }

    fn mark_turn_ended(&mut self, id: &str) -> Result<(), StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            client
                .execute(
                    "UPDATE conversations SET ended_at_seq =
                        (SELECT max(seq) FROM conversation_messages WHERE conversation_id = $1)
                     WHERE id = $1",
                    &[&id],
                )
                .await?;
            Ok(())
        })
    }

    fn turn_ended_at(&self, id: &str) -> Result<Option<i64>, StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            let row = client
                .query_opt(
                    "SELECT ended_at_seq FROM conversations WHERE id = $1",
                    &[&id],
                )
                .await?;
            Ok(row.and_then(|row| row.get::<_, Option<i64>>(0)))
        })
    }

    fn messages(&self, id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            let rows = client
                .query(
                    "SELECT seq, role, content FROM conversation_messages
                     WHERE conversation_id = $1 ORDER BY seq",
                    &[&id],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|row| StoredMessage {
                    seq: row.get(0),
                    role: row.get(1),
                    content: row.get(2),
                })
                .collect())
        })
    }

    fn record_step_usage(
        &mut self,
        id: &str,
        turn: u32,
        step: u32,
        model: &str,
        tokens: &Tokens,
    ) -> Result<(), StoreError> {
        let (turn, step) = (
            i32::try_from(turn).unwrap_or(i32::MAX),
            i32::try_from(step).unwrap_or(i32::MAX),
        );
        let values = [
            int(tokens.input),
            int(tokens.cache_read),
            int(tokens.cache_write),
            int(tokens.output),
            int(tokens.reasoning),
        ];
        self.run(async {
            let client = self.store.client().await?;
            client
                .execute(
                    "INSERT INTO conversation_steps (conversation_id, turn, step, model, input,
                         cache_read, cache_write, output, reasoning, at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                    &[
                        &id,
                        &turn,
                        &step,
                        &model,
                        &values[0],
                        &values[1],
                        &values[2],
                        &values[3],
                        &values[4],
                        &crate::now_ms(),
                    ],
                )
                .await?;
            Ok(())
        })
    }

    fn conversation_usage(&self, id: &str) -> Result<(Vec<(u32, Tokens)>, Tokens), StoreError> {
        let turns: Vec<(u32, Tokens)> = self.run(async {
            let client = self.store.client().await?;
            let rows = client
                .query(
                    "SELECT turn, sum(input)::bigint, sum(cache_read)::bigint,
                         sum(cache_write)::bigint, sum(output)::bigint, sum(reasoning)::bigint
                     FROM conversation_steps WHERE conversation_id = $1
                     GROUP BY turn ORDER BY turn",
                    &[&id],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|row| {
                    let at = |index: usize| count(row.get::<_, i64>(index));
                    (
                        u32::try_from(row.get::<_, i32>(0)).unwrap_or(0),
                        Tokens {
                            input: at(1),
                            cache_read: at(2),
                            cache_write: at(3),
                            output: at(4),
                            reasoning: at(5),
                        },
                    )
                })
                .collect())
        })?;
        let total = turns
            .iter()
            .fold(Tokens::default(), |sum, (_, tokens)| Tokens {
                input: sum.input + tokens.input,
                cache_read: sum.cache_read + tokens.cache_read,
                cache_write: sum.cache_write + tokens.cache_write,
                output: sum.output + tokens.output,
                reasoning: sum.reasoning + tokens.reasoning,
            });
        Ok((turns, total))
    }

    fn record_checkpoint(
        &mut self,
        conversation: &str,
        turn: u32,
        before: &str,
        after: &str,
    ) -> Result<(), StoreError> {
        let turn = i32::try_from(turn).unwrap_or(i32::MAX);
        self.run(async {
            let client = self.store.client().await?;
            client
                .execute(
                    "INSERT INTO conversation_checkpoints
                         (conversation_id, turn, before_tree, after_tree, created_at)
                     VALUES ($1, $2, $3, $4, $5)
                     ON CONFLICT (conversation_id, turn) DO UPDATE SET
                         before_tree = excluded.before_tree, after_tree = excluded.after_tree,
                         undone_at = NULL, created_at = excluded.created_at",
                    &[&conversation, &turn, &before, &after, &now_secs()],
                )
                .await?;
            Ok(())
        })
    }

    fn checkpoints(&self, conversation: &str) -> Result<Vec<CheckpointRecord>, StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            let rows = client
                .query(
                    "SELECT turn, before_tree, after_tree, undone_at FROM conversation_checkpoints
                     WHERE conversation_id = $1 ORDER BY turn",
                    &[&conversation],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|row| CheckpointRecord {
                    turn: u32::try_from(row.get::<_, i32>(0)).unwrap_or(0),
                    before: row.get(1),
                    after: row.get(2),
                    undone_at: row.get(3),
                })
                .collect())
        })
    }

    fn mark_undone(&mut self, conversation: &str, turn: u32) -> Result<bool, StoreError> {
        let turn = i32::try_from(turn).unwrap_or(i32::MAX);
        self.run(async {
            let client = self.store.client().await?;
            let changed = client
                .execute(
                    "UPDATE conversation_checkpoints SET undone_at = $3
                     WHERE conversation_id = $1 AND turn = $2 AND undone_at IS NULL",
                    &[&conversation, &turn, &now_secs()],
                )
                .await?;
            Ok(changed > 0)
        })
    }

    fn last_turn(&self, conversation: &str) -> Result<u32, StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            let turn: i32 = client
                .query_one(
                    "SELECT greatest(
                         COALESCE((SELECT max(turn) FROM conversation_steps
                                   WHERE conversation_id = $1), 0),
                         COALESCE((SELECT max(turn) FROM conversation_checkpoints
                                   WHERE conversation_id = $1), 0))",
                    &[&conversation],
                )
                .await?
                .get(0);
            Ok(u32::try_from(turn).unwrap_or(0))
        })
    }

    fn record(&mut self, record: &UsageRecord) -> Result<(), StoreError> {
        self.ledger.write(std::slice::from_ref(record))
    }

    fn usage_by_day_and_model(&self, since_ms: Option<i64>) -> Result<Vec<UsageRow>, StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            let sql = format!(
                "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, model, provider,
                        front_end, {AGGREGATES}
                 FROM usage_events
                 WHERE $1::bigint IS NULL OR at >= to_timestamp($1::bigint / 1000.0)
                 GROUP BY day, model, provider, front_end
                 ORDER BY day, model, provider, front_end"
            );
            let rows = client.query(&sql, &[&since_ms]).await?;
            Ok(rows
                .iter()
                .map(|row| {
                    let (requests, errors, tokens) = aggregate(row, 4);
                    UsageRow {
                        day: row.get(0),
                        model: row.get(1),
                        provider: row.get(2),
                        front_end: row.get(3),
                        requests,
                        errors,
                        tokens,
                    }
                })
                .collect())
        })
    }

    fn totals(&self, since_ms: Option<i64>) -> Result<UsageTotals, StoreError> {
        self.run(async {
            let client = self.store.client().await?;
            let sql = format!(
                "SELECT {AGGREGATES} FROM usage_events
                 WHERE $1::bigint IS NULL OR at >= to_timestamp($1::bigint / 1000.0)"
            );
            let row = client.query_one(&sql, &[&since_ms]).await?;
            let (requests, errors, tokens) = aggregate(&row, 0);
            Ok(UsageTotals {
                requests,
                errors,
                tokens,
            })
        })
    }
}
