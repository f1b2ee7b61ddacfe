//! The schema, as an ordered list of SQL steps.
//!
//! `PRAGMA user_version` holds how many steps a database has applied. Opening a store applies
//! the missing ones in order, in one transaction. Never edit or reorder a step that has shipped:
//! add a new one at the end.

/// Every schema step, oldest first. Step `n` (1-based) brings `user_version` to `n`.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: the usage ledger / request log, one row per gateway request.
    "CREATE TABLE requests (
        id          INTEGER PRIMARY KEY,
        at          INTEGER NOT NULL,            -- Unix milliseconds
        route       TEXT    NOT NULL,            -- chat_completions, messages, completions, ...
        inbound     TEXT    NOT NULL,            -- openai-chat, anthropic, gemini, fim, ...
        provider    TEXT    NOT NULL,
        model       TEXT    NOT NULL,            -- the upstream model name
        status      INTEGER NOT NULL,            -- HTTP status, 0 when none was received
        outcome     TEXT    NOT NULL,            -- ok, error, stream_error, cancelled
        latency_ms  INTEGER NOT NULL,
        ttfb_ms     INTEGER,
        input       INTEGER NOT NULL DEFAULT 0,  -- excludes cache reads and writes
        cache_read  INTEGER NOT NULL DEFAULT 0,
        cache_write INTEGER NOT NULL DEFAULT 0,
        output      INTEGER NOT NULL DEFAULT 0,  -- includes reasoning
        reasoning   INTEGER NOT NULL DEFAULT 0,
        attempts    INTEGER NOT NULL DEFAULT 1,
        prompt      TEXT                         -- only when the caller passed one
    );
    CREATE INDEX requests_at ON requests (at);",
    // 2: the agent's conversations, their messages, and usage per step.
    "CREATE TABLE conversations (
        id          TEXT    PRIMARY KEY,
        project     TEXT    NOT NULL,            -- the project folder, canonical
        title       TEXT    NOT NULL DEFAULT '',
        model       TEXT,
        created_at  INTEGER NOT NULL,            -- Unix seconds
        updated_at  INTEGER NOT NULL
    );
    CREATE INDEX conversations_project ON conversations (project, updated_at);
    CREATE TABLE messages (
        id              INTEGER PRIMARY KEY,
        conversation_id TEXT    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        seq             INTEGER NOT NULL,
        role            TEXT    NOT NULL,
        content         TEXT    NOT NULL,        -- JSON, owned by the agent
        created_at      INTEGER NOT NULL,
        UNIQUE (conversation_id, seq)
    );
    CREATE TABLE step_usage (
        id              INTEGER PRIMARY KEY,
        conversation_id TEXT    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        turn            INTEGER NOT NULL,
        step            INTEGER NOT NULL,
        model           TEXT    NOT NULL,
        input           INTEGER NOT NULL DEFAULT 0,
        cache_read      INTEGER NOT NULL DEFAULT 0,
        cache_write     INTEGER NOT NULL DEFAULT 0,
        output          INTEGER NOT NULL DEFAULT 0,
        reasoning       INTEGER NOT NULL DEFAULT 0,
        at              INTEGER NOT NULL
    );
    CREATE TABLE project_state (
        project              TEXT PRIMARY KEY,
        current_conversation TEXT REFERENCES conversations (id) ON DELETE SET NULL
    );",
    // 3: which front end made each request: `gateway` for the HTTP APIs, `chat`, `exec`, `web`,
    // `acp` for the agent's model calls. Every row before this step came from the gateway.
    "ALTER TABLE requests ADD COLUMN front_end TEXT NOT NULL DEFAULT 'gateway';",
    // 4: the agent's checkpoints: the project's tree before and after each turn that changed
    // files (ids in the agent's shadow repository), for `/undo` and `/diff`.
    "CREATE TABLE checkpoints (
        id              INTEGER PRIMARY KEY,
        conversation_id TEXT    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        turn            INTEGER NOT NULL,
        before_tree     TEXT    NOT NULL,
        after_tree      TEXT    NOT NULL,
        undone_at       INTEGER,                 -- Unix seconds; NULL while the change stands
        created_at      INTEGER NOT NULL,
        UNIQUE (conversation_id, turn)
    );",
    // 5: the last message of a turn that ended while corvid watched (cancelled, failed), so a
    // conversation reopened after it is not reported as cut short by a crash. A later message
    // has a higher seq, which makes the mark stale by itself.
    "ALTER TABLE conversations ADD COLUMN ended_at_seq INTEGER;",
    // 6: routing: which pool key (by index) sent a request, and the task rule that chose its
    // target; NULL for rows before routing and for requests no rule or pool touched.
    "ALTER TABLE requests ADD COLUMN key_index INTEGER;
    ALTER TABLE requests ADD COLUMN rule TEXT;",
    // 7: team mode on SQLite: budgets, teams, client keys (public id + SHA-256 of the secret),
    // the holds requests take against budgets, rate-limit windows, instances' heartbeats; and
    // each ledger row's request id, key, team, price snapshot (µ$ per million tokens) and cost
    // in µ$. A request id appears once: its row is written, and its hold settled, only once.
    "CREATE TABLE budgets (
        id           INTEGER PRIMARY KEY,
        scope        TEXT    NOT NULL UNIQUE,     -- key:<name> or team:<name>
        cap_micros   INTEGER NOT NULL,
        period       TEXT    NOT NULL,            -- day or month (UTC)
        window_start INTEGER NOT NULL DEFAULT 0,  -- Unix milliseconds
        spent        INTEGER NOT NULL DEFAULT 0,
        reserved     INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0)
    );
    CREATE TABLE teams (
        id         INTEGER PRIMARY KEY,
        name       TEXT    NOT NULL UNIQUE,
        budget_id  INTEGER REFERENCES budgets (id),
        created_at INTEGER NOT NULL
    );
    CREATE TABLE client_keys (
        id          INTEGER PRIMARY KEY,
        name        TEXT    NOT NULL UNIQUE,
        public_id   TEXT    NOT NULL UNIQUE,
        secret_hash BLOB    NOT NULL,
        team_id     INTEGER REFERENCES teams (id),
        budget_id   INTEGER REFERENCES budgets (id),
        models      TEXT    NOT NULL DEFAULT '',  -- comma-separated patterns; empty: every model
        rpm         INTEGER,
        tpm         INTEGER,
        revoked_at  INTEGER,
        created_at  INTEGER NOT NULL
    );
    CREATE TABLE reservations (
        request_id  TEXT    NOT NULL,
        budget_id   INTEGER NOT NULL REFERENCES budgets (id),
        amount      INTEGER NOT NULL,
        instance_id TEXT    NOT NULL,
        expires_at  INTEGER NOT NULL,
        PRIMARY KEY (request_id, budget_id)
    );
    CREATE TABLE rate_windows (
        key_id   INTEGER NOT NULL,
        minute   INTEGER NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0,
        tokens   INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (key_id, minute)
    );
    CREATE TABLE instances (id TEXT PRIMARY KEY, heartbeat_at INTEGER NOT NULL);
    ALTER TABLE requests ADD COLUMN request_id TEXT;
    ALTER TABLE requests ADD COLUMN key_id INTEGER;
    ALTER TABLE requests ADD COLUMN team_id INTEGER;
    ALTER TABLE requests ADD COLUMN cost_micros INTEGER;
    ALTER TABLE requests ADD COLUMN price_input INTEGER;
    ALTER TABLE requests ADD COLUMN price_cached_input INTEGER;
    ALTER TABLE requests ADD COLUMN price_cache_write INTEGER;
    ALTER TABLE requests ADD COLUMN price_output INTEGER;
    CREATE UNIQUE INDEX requests_request_id ON requests (request_id) WHERE request_id IS NOT NULL;",
    // 8: requests admitted per key and UTC day (the local user's `daily_requests` quota).
    "CREATE TABLE daily_requests (
        key_id   INTEGER NOT NULL,
        day      INTEGER NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (key_id, day)
    );",
    // 9: a client key's own daily request quota (`corvid keys create --daily-requests N`),
    // counted in `daily_requests` like the local user's.
    "ALTER TABLE client_keys ADD COLUMN daily_requests INTEGER;",
];
