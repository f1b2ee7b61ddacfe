//! PostgreSQL's schema, as ordered steps recorded in `corvid_schema (version)`.
//!
//! Only `corvid migrate` applies them, under a session advisory lock so two at once are safe
//! (the second waits, then finds nothing to do). `corvid serve` only reads the version and
//! refuses to start on a mismatch. Never edit a step that has shipped: add one at the end.

/// The advisory lock key of migrations ("corvid" in ASCII).
pub(crate) const MIGRATE_LOCK: i64 = 0x636f_7276_6964;

/// Every schema step, oldest first. Step `n` (1-based) brings the version to `n`.
pub(crate) const STEPS: &[&str] = &[
    // 1: keys, teams, budgets, holds, rate windows, instances; the ledger partitioned by day
    // with its daily rollup; the functions that take, settle and sweep holds.
    r#"
CREATE TABLE budgets (
    id           bigserial PRIMARY KEY,
    scope        text      NOT NULL UNIQUE,
    cap_micros   bigint    NOT NULL,
    period       text      NOT NULL CHECK (period IN ('day', 'month')),
    window_start timestamp NOT NULL DEFAULT date_trunc('day', now() AT TIME ZONE 'UTC'),
    spent        bigint    NOT NULL DEFAULT 0,
    reserved     bigint    NOT NULL DEFAULT 0 CHECK (reserved >= 0)
);
CREATE TABLE teams (
    id         bigserial   PRIMARY KEY,
    name       text        NOT NULL UNIQUE,
    budget_id  bigint      REFERENCES budgets (id),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE client_keys (
    id          bigserial   PRIMARY KEY,
    name        text        NOT NULL UNIQUE,
    public_id   text        NOT NULL UNIQUE,
    secret_hash bytea       NOT NULL,
    team_id     bigint      REFERENCES teams (id),
    budget_id   bigint      REFERENCES budgets (id),
    models      text[]      NOT NULL DEFAULT '{}',
    rpm         integer,
    tpm         bigint,
    revoked_at  timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE reservations (
    request_id  text        NOT NULL,
    budget_id   bigint      NOT NULL REFERENCES budgets (id),
    amount      bigint      NOT NULL,
    instance_id text        NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (request_id, budget_id)
);
CREATE TABLE rate_windows (
    key_id   bigint    NOT NULL,
    minute   timestamp NOT NULL,
    requests integer   NOT NULL DEFAULT 0,
    tokens   bigint    NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, minute)
);
CREATE TABLE instances (id text PRIMARY KEY, heartbeat_at timestamptz NOT NULL);
CREATE TABLE usage_events (
    at                 timestamptz NOT NULL,
    request_id         text        NOT NULL,
    key_id             bigint,
    team_id            bigint,
    front_end          text        NOT NULL,
    route              text        NOT NULL,
    inbound            text        NOT NULL,
    provider           text        NOT NULL,
    model              text        NOT NULL,
    status             integer     NOT NULL,
    outcome            text        NOT NULL,
    latency_ms         bigint      NOT NULL,
    ttfb_ms            bigint,
    input              bigint      NOT NULL DEFAULT 0,
    cache_read         bigint      NOT NULL DEFAULT 0,
    cache_write        bigint      NOT NULL DEFAULT 0,
    output             bigint      NOT NULL DEFAULT 0,
    reasoning          bigint      NOT NULL DEFAULT 0,
    attempts           integer     NOT NULL DEFAULT 1,
    cost_micros        bigint      NOT NULL DEFAULT 0,
    price_input        bigint,
    price_cached_input bigint,
    price_cache_write  bigint,
    price_output       bigint,
    prompt             text,
    PRIMARY KEY (request_id, at)
) PARTITION BY RANGE (at);
CREATE TABLE usage_events_default PARTITION OF usage_events DEFAULT;
CREATE TABLE usage_daily (
    day         date   NOT NULL,
    key_id      bigint NOT NULL DEFAULT 0,
    team_id     bigint NOT NULL DEFAULT 0,
    model       text   NOT NULL,
    requests    bigint NOT NULL DEFAULT 0,
    errors      bigint NOT NULL DEFAULT 0,
    input       bigint NOT NULL DEFAULT 0,
    output      bigint NOT NULL DEFAULT 0,
    cost_micros bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (day, key_id, team_id, model)
);

-- One partition per UTC day from today - 1 for p_days days; concurrent callers serialize.
CREATE FUNCTION corvid_ensure_partitions(p_days integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE d date;
BEGIN
    PERFORM pg_advisory_xact_lock(109330312882533);
    FOR i IN -1 .. p_days - 1 LOOP
        d := (now() AT TIME ZONE 'UTC')::date + i;
        EXECUTE format(
            'CREATE TABLE IF NOT EXISTS %I PARTITION OF usage_events FOR VALUES FROM (%L) TO (%L)',
            'usage_events_' || to_char(d, 'YYYYMMDD'),
            (d::timestamp AT TIME ZONE 'UTC'), ((d + 1)::timestamp AT TIME ZONE 'UTC'));
    END LOOP;
END $$;

-- Takes a hold against every budget in p_budgets (locked in id order, so two holds never
-- deadlock) and one request plus p_tokens against the key's rate window; or refuses and takes
-- nothing. Returns no row when held, else (kind, scope, limit, resets_at).
CREATE FUNCTION corvid_reserve(
    p_request text, p_key bigint, p_budgets bigint[], p_amount bigint, p_tokens bigint,
    p_rpm integer, p_tpm bigint, p_instance text, p_lease_ms bigint)
RETURNS TABLE (kind text, scope text, cap bigint, resets_at timestamp) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    b record;
    utc timestamp := now() AT TIME ZONE 'UTC';
    start timestamp;
    w record;
BEGIN
    FOR b IN SELECT * FROM budgets WHERE id = ANY (p_budgets) ORDER BY id FOR UPDATE LOOP
        start := date_trunc(b.period, utc);
        IF b.window_start < start THEN
            UPDATE budgets SET spent = 0, window_start = start WHERE id = b.id;
            b.spent := 0;
        END IF;
        IF b.spent + b.reserved + p_amount > b.cap_micros THEN
            RETURN QUERY SELECT 'budget'::text, b.scope, b.cap_micros,
                start + ('1 ' || b.period)::interval;
            RETURN;
        END IF;
    END LOOP;
    IF p_rpm IS NOT NULL OR p_tpm IS NOT NULL THEN
        INSERT INTO rate_windows (key_id, minute) VALUES (p_key, date_trunc('minute', utc))
            ON CONFLICT DO NOTHING;
        SELECT * INTO w FROM rate_windows
            WHERE key_id = p_key AND minute = date_trunc('minute', utc) FOR UPDATE;
        IF p_rpm IS NOT NULL AND w.requests + 1 > p_rpm THEN
            RETURN QUERY SELECT 'rpm'::text, ''::text, p_rpm::bigint, w.minute + interval '1 minute';
            RETURN;
        END IF;
        IF p_tpm IS NOT NULL AND w.tokens + p_tokens > p_tpm THEN
            RETURN QUERY SELECT 'tpm'::text, ''::text, p_tpm, w.minute + interval '1 minute';
            RETURN;
        END IF;
        UPDATE rate_windows SET requests = requests + 1, tokens = tokens + p_tokens
            WHERE key_id = p_key AND minute = w.minute;
    END IF;
    IF cardinality(p_budgets) > 0 THEN
        UPDATE budgets SET reserved = reserved + p_amount WHERE id = ANY (p_budgets);
        INSERT INTO reservations (request_id, budget_id, amount, instance_id, expires_at)
            SELECT p_request, id, p_amount, p_instance,
                   now() + make_interval(secs => p_lease_ms / 1000.0)
            FROM unnest(p_budgets) AS id;
    END IF;
END $$;

-- Settles written rows: each row's cost goes to its key's and its key's team's budgets, and
-- the hold of its request (the row id up to a '.': a routing fallback's later attempts are
-- `<id>.<n>`) is released. One loop over the budgets in id order, so two writers never
-- deadlock. A hold released already (an earlier attempt's row) releases nothing again.
CREATE FUNCTION corvid_settle(p_requests text[], p_costs bigint[], p_keys bigint[])
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r record; n bigint := 0;
BEGIN
    FOR r IN
        WITH gone AS (
            DELETE FROM reservations
            WHERE request_id = ANY (SELECT split_part(x, '.', 1) FROM unnest(p_requests) AS x)
            RETURNING budget_id, amount),
        charged AS (
            SELECT b.id AS budget_id, 0::bigint AS amount, c.cost
            FROM unnest(p_keys, p_costs) AS c (key_id, cost)
            JOIN client_keys k ON k.id = c.key_id
            LEFT JOIN teams t ON t.id = k.team_id
            JOIN budgets b ON b.id = k.budget_id OR b.id = t.budget_id)
        SELECT budget_id, sum(amount)::bigint AS amount, sum(cost)::bigint AS cost FROM (
            SELECT budget_id, amount, 0::bigint AS cost FROM gone
            UNION ALL SELECT budget_id, amount, cost FROM charged) parts
        GROUP BY budget_id ORDER BY budget_id
    LOOP
        UPDATE budgets SET reserved = greatest(reserved - r.amount, 0), spent = spent + r.cost
            WHERE id = r.budget_id;
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;

-- Settles, at their estimate, the holds whose lease ended or whose instance has not
-- heartbeaten for p_dead_ms; one sweeper at a time. Returns the requests settled.
CREATE FUNCTION corvid_sweep(p_dead_ms bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r record; n bigint := 0;
BEGIN
    IF NOT pg_try_advisory_xact_lock(109330312882534) THEN
        RETURN 0;
    END IF;
    SELECT count(DISTINCT request_id) INTO n FROM reservations
        WHERE expires_at < now()
           OR instance_id NOT IN (SELECT id FROM instances
                                  WHERE heartbeat_at > now() - make_interval(secs => p_dead_ms / 1000.0));
    FOR r IN
        WITH gone AS (
            DELETE FROM reservations
            WHERE expires_at < now()
               OR instance_id NOT IN (SELECT id FROM instances
                                      WHERE heartbeat_at > now() - make_interval(secs => p_dead_ms / 1000.0))
            RETURNING budget_id, amount)
        SELECT budget_id, sum(amount)::bigint AS amount FROM gone
        GROUP BY budget_id ORDER BY budget_id
    LOOP
        UPDATE budgets SET reserved = greatest(reserved - r.amount, 0), spent = spent + r.amount
            WHERE id = r.budget_id;
    END LOOP;
    DELETE FROM rate_windows WHERE minute < (now() AT TIME ZONE 'UTC') - interval '2 minutes';
    RETURN n;
END $$;

SELECT corvid_ensure_partitions(8);
"#,
    // 2: a change to a key or a team is announced on the channel `corvid_keys` (the key's
    // public id, or `*` for every key), so every instance drops it from its key cache at once.
    r#"
CREATE FUNCTION corvid_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME <> 'client_keys' THEN
        PERFORM pg_notify('corvid_keys', '*');
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('corvid_keys', OLD.public_id);
    ELSE
        PERFORM pg_notify('corvid_keys', NEW.public_id);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER corvid_keys_changed AFTER UPDATE OR DELETE ON client_keys
    FOR EACH ROW EXECUTE FUNCTION corvid_key_changed();
CREATE TRIGGER corvid_teams_changed AFTER UPDATE OR DELETE ON teams
    FOR EACH ROW EXECUTE FUNCTION corvid_key_changed();
"#,
    // 3: settling rows holds the hold while the request goes on: a routing fallback's failed
    // attempt (outcome `error`, p_release false) is charged but keeps the request's hold for
    // the next attempt; the row that ends the request (or the gate, for an error answer)
    // releases it.
    r#"
CREATE FUNCTION corvid_settle(p_requests text[], p_costs bigint[], p_keys bigint[],
    p_release boolean[])
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r record; n bigint := 0;
BEGIN
    FOR r IN
        WITH gone AS (
            DELETE FROM reservations
            WHERE request_id = ANY (SELECT split_part(x, '.', 1)
                                    FROM unnest(p_requests, p_release) AS q (x, release)
                                    WHERE release)
            RETURNING budget_id, amount),
        charged AS (
            SELECT b.id AS budget_id, 0::bigint AS amount, c.cost
            FROM unnest(p_keys, p_costs) AS c (key_id, cost)
            JOIN client_keys k ON k.id = c.key_id
            LEFT JOIN teams t ON t.id = k.team_id
            JOIN budgets b ON b.id = k.budget_id OR b.id = t.budget_id)
        SELECT budget_id, sum(amount)::bigint AS amount, sum(cost)::bigint AS cost FROM (
            SELECT budget_id, amount, 0::bigint AS cost FROM gone
            UNION ALL SELECT budget_id, amount, cost FROM charged) parts
        GROUP BY budget_id ORDER BY budget_id
    LOOP
        UPDATE budgets SET reserved = greatest(reserved - r.amount, 0), spent = spent + r.cost
            WHERE id = r.budget_id;
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;
-- Step 1's three-argument form (a hold released by hand) becomes this one with every hold
-- released, so the settling logic lives once.
CREATE OR REPLACE FUNCTION corvid_settle(p_requests text[], p_costs bigint[], p_keys bigint[])
RETURNS bigint LANGUAGE sql AS $$
    SELECT corvid_settle(p_requests, p_costs, p_keys,
        array_fill(true, ARRAY[coalesce(cardinality(p_requests), 0)]))
$$;
"#,
    // 4: the agent's conversations (several per project folder), their messages (JSON the
    // agent owns), token usage per step, the checkpoints `/undo` and `/diff` read, and each
    // project's current conversation: what SQLite's steps 2, 4 and 5 hold, so every instance
    // lists and opens the same conversations. Times are Unix seconds, as on SQLite.
    r#"
CREATE TABLE conversations (
    id           text      PRIMARY KEY,
    project      text      NOT NULL,
    title        text      NOT NULL DEFAULT '',
    model        text,
    created_at   bigint    NOT NULL,
    updated_at   bigint    NOT NULL,
    ended_at_seq bigint,
    created_seq  bigserial NOT NULL
);
CREATE INDEX conversations_project ON conversations (project, updated_at DESC);
CREATE TABLE conversation_messages (
    conversation_id text   NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq             bigint NOT NULL,
    role            text   NOT NULL,
    content         text   NOT NULL,
    created_at      bigint NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
CREATE TABLE conversation_steps (
    conversation_id text    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    turn            integer NOT NULL,
    step            integer NOT NULL,
    model           text    NOT NULL,
    input           bigint  NOT NULL DEFAULT 0,
    cache_read      bigint  NOT NULL DEFAULT 0,
    cache_write     bigint  NOT NULL DEFAULT 0,
    output          bigint  NOT NULL DEFAULT 0,
    reasoning       bigint  NOT NULL DEFAULT 0,
    at              bigint  NOT NULL
);
CREATE INDEX conversation_steps_turn ON conversation_steps (conversation_id, turn);
CREATE TABLE conversation_checkpoints (
    conversation_id text    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    turn            integer NOT NULL,
    before_tree     text    NOT NULL,
    after_tree      text    NOT NULL,
    undone_at       bigint,
    created_at      bigint  NOT NULL,
    PRIMARY KEY (conversation_id, turn)
);
CREATE TABLE project_state (
    project              text PRIMARY KEY,
    current_conversation text REFERENCES conversations (id) ON DELETE SET NULL
);
"#,
    // 5: a daily request quota per key (`corvid keys create --daily-requests N`): admitted
    // requests counted per key and UTC day, checked and counted by `corvid_reserve` in the same
    // step as the key's budgets and rate window (a refused request counts nowhere).
    r#"
ALTER TABLE client_keys ADD COLUMN daily_requests integer CHECK (daily_requests > 0);
CREATE TABLE key_daily_requests (
    key_id   bigint  NOT NULL,
    day      date    NOT NULL,
    requests integer NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, day)
);
CREATE FUNCTION corvid_reserve(
    p_request text, p_key bigint, p_budgets bigint[], p_amount bigint, p_tokens bigint,
    p_rpm integer, p_tpm bigint, p_instance text, p_lease_ms bigint, p_daily integer)
RETURNS TABLE (kind text, scope text, cap bigint, resets_at timestamp) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    b record;
    utc timestamp := now() AT TIME ZONE 'UTC';
    today date := (now() AT TIME ZONE 'UTC')::date;
    start timestamp;
    w record;
    made integer;
BEGIN
    FOR b IN SELECT * FROM budgets WHERE id = ANY (p_budgets) ORDER BY id FOR UPDATE LOOP
        start := date_trunc(b.period, utc);
        IF b.window_start < start THEN
            UPDATE budgets SET spent = 0, window_start = start WHERE id = b.id;
            b.spent := 0;
        END IF;
        IF b.spent + b.reserved + p_amount > b.cap_micros THEN
            RETURN QUERY SELECT 'budget'::text, b.scope, b.cap_micros,
                start + ('1 ' || b.period)::interval;
            RETURN;
        END IF;
    END LOOP;
    IF p_rpm IS NOT NULL OR p_tpm IS NOT NULL THEN
        INSERT INTO rate_windows (key_id, minute) VALUES (p_key, date_trunc('minute', utc))
            ON CONFLICT DO NOTHING;
        SELECT * INTO w FROM rate_windows
            WHERE key_id = p_key AND minute = date_trunc('minute', utc) FOR UPDATE;
        IF p_rpm IS NOT NULL AND w.requests + 1 > p_rpm THEN
            RETURN QUERY SELECT 'rpm'::text, ''::text, p_rpm::bigint, w.minute + interval '1 minute';
            RETURN;
        END IF;
        IF p_tpm IS NOT NULL AND w.tokens + p_tokens > p_tpm THEN
            RETURN QUERY SELECT 'tpm'::text, ''::text, p_tpm, w.minute + interval '1 minute';
            RETURN;
        END IF;
    END IF;
    IF p_daily IS NOT NULL THEN
        INSERT INTO key_daily_requests (key_id, day) VALUES (p_key, today)
            ON CONFLICT DO NOTHING;
        SELECT requests INTO made FROM key_daily_requests
            WHERE key_id = p_key AND day = today FOR UPDATE;
        IF made + 1 > p_daily THEN
            RETURN QUERY SELECT 'daily'::text, ''::text, p_daily::bigint,
                today::timestamp + interval '1 day';
            RETURN;
        END IF;
        UPDATE key_daily_requests SET requests = requests + 1
            WHERE key_id = p_key AND day = today;
        DELETE FROM key_daily_requests WHERE key_id = p_key AND day < today - 1;
    END IF;
    IF p_rpm IS NOT NULL OR p_tpm IS NOT NULL THEN
        UPDATE rate_windows SET requests = requests + 1, tokens = tokens + p_tokens
            WHERE key_id = p_key AND minute = w.minute;
    END IF;
    IF cardinality(p_budgets) > 0 THEN
        UPDATE budgets SET reserved = reserved + p_amount WHERE id = ANY (p_budgets);
        INSERT INTO reservations (request_id, budget_id, amount, instance_id, expires_at)
            SELECT p_request, id, p_amount, p_instance,
                   now() + make_interval(secs => p_lease_ms / 1000.0)
            FROM unnest(p_budgets) AS id;
    END IF;
END $$;
-- Step 1's nine-argument form is this one without a daily quota, so the logic lives once.
CREATE OR REPLACE FUNCTION corvid_reserve(
    p_request text, p_key bigint, p_budgets bigint[], p_amount bigint, p_tokens bigint,
    p_rpm integer, p_tpm bigint, p_instance text, p_lease_ms bigint)
RETURNS TABLE (kind text, scope text, cap bigint, resets_at timestamp) LANGUAGE sql AS $$
    SELECT * FROM corvid_reserve(p_request, p_key, p_budgets, p_amount, p_tokens, p_rpm, p_tpm,
        p_instance, p_lease_ms, NULL::integer)
$$;
"#,
];
