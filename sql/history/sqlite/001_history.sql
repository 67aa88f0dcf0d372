-- clickrecon's own tables in HISTORY_DSN (SQLite): run history and the
-- state of Slack alerts. The same tables as sql/history/postgres, in
-- SQLite's types: dates are TEXT YYYY-MM-DD, instants TEXT in RFC 3339 UTC
-- (2026-11-28T03:00:12Z), booleans INTEGER 0 or 1. Applied by
-- `clickrecon migrate` inside one transaction, after which the version
-- 001_history is recorded in schema_migrations. Never edit a released
-- migration: add 002_... instead.

-- runs: one row per recorded run (dry runs are never recorded). run_key is
-- not unique: a rerun of a window has the same key and its own row.
CREATE TABLE runs (
    id                INTEGER PRIMARY KEY,
    run_key           TEXT    NOT NULL,
    workspace_id      TEXT    NOT NULL,
    tz                TEXT    NOT NULL,
    window_from       TEXT    NOT NULL CHECK (window_from GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    window_to         TEXT    NOT NULL CHECK (window_to GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    generated_at      TEXT    NOT NULL,
    recorded_at       TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    status            TEXT    NOT NULL,
    interrupted       TEXT    NOT NULL DEFAULT '',
    api_clicks        INTEGER NOT NULL, -- totals over the days both sides were read
    local_clicks      INTEGER NOT NULL,
    delta_clicks      INTEGER NOT NULL,
    api_summary       INTEGER,          -- Elido's /summary; NULL when not read
    days              INTEGER NOT NULL,
    days_match        INTEGER NOT NULL,
    days_missing      INTEGER NOT NULL,
    days_surplus      INTEGER NOT NULL,
    days_provisional  INTEGER NOT NULL,
    days_unverifiable INTEGER NOT NULL,
    CHECK (window_from <= window_to)
) STRICT;

CREATE INDEX runs_workspace_tz_idx ON runs (workspace_id, tz);
CREATE INDEX runs_run_key_idx ON runs (run_key);

-- run_days: each run's verdict per day. A count that was not known is NULL.
CREATE TABLE run_days (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    day          TEXT    NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    hours        REAL    NOT NULL,
    api_clicks   INTEGER,
    local_clicks INTEGER,
    delta_clicks INTEGER,
    status       TEXT    NOT NULL,
    severity     TEXT    NOT NULL,
    settled      INTEGER NOT NULL CHECK (settled IN (0, 1)),
    reason       TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, day)
) STRICT;

-- Revisions look up the latest earlier reading of each day.
CREATE INDEX run_days_day_idx ON run_days (day);

-- slack_messages: every Slack message posted or edited, for the record.
-- channel and ts are empty for an incoming webhook, which returns neither.
CREATE TABLE slack_messages (
    id           INTEGER PRIMARY KEY,
    run_key      TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    tz           TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('alert', 'update', 'healed')),
    action       TEXT NOT NULL CHECK (action IN ('posted', 'updated')),
    transport    TEXT NOT NULL CHECK (transport IN ('webhook', 'bot')),
    channel      TEXT NOT NULL DEFAULT '',
    ts           TEXT NOT NULL DEFAULT '',
    sent_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;

CREATE INDEX slack_messages_run_key_idx ON slack_messages (run_key);

-- alerts: what Slack was last told about each day of a workspace and zone,
-- the key of de-duplication. A day is alerted again only when its status or
-- counts change; healed marks a day alerted as a gap that later matched.
-- channel and ts name the newest message that shows the day (empty for a
-- webhook), the one a later run edits in place; window_from and window_to
-- are that message's window.
CREATE TABLE alerts (
    workspace_id TEXT    NOT NULL,
    store_id     TEXT    NOT NULL DEFAULT '', -- the report's store_id: two stores of one workspace keep apart
    tz           TEXT    NOT NULL,
    day          TEXT    NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    status       TEXT    NOT NULL CHECK (status IN ('missing', 'surplus')),
    severity     TEXT    NOT NULL,
    api_clicks   INTEGER NOT NULL, -- the counts as alerted
    local_clicks INTEGER NOT NULL,
    delta_clicks INTEGER NOT NULL,
    healed       INTEGER NOT NULL DEFAULT 0 CHECK (healed IN (0, 1)),
    transport    TEXT    NOT NULL CHECK (transport IN ('webhook', 'bot')),
    channel      TEXT    NOT NULL DEFAULT '',
    ts           TEXT    NOT NULL DEFAULT '',
    window_from  TEXT    NOT NULL,
    window_to    TEXT    NOT NULL,
    run_key      TEXT    NOT NULL, -- the run that last changed the row
    alerted_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    updated_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (workspace_id, store_id, tz, day)
) STRICT;

CREATE INDEX alerts_message_idx ON alerts (channel, ts) WHERE ts <> '';
