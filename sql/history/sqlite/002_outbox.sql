-- outbox: every Slack post a run is about to make, recorded before it is
-- made (pending) and marked after Slack answered (posted, with channel and
-- ts), or given up (abandoned: a rerun found it was never delivered). The
-- same table as sql/history/postgres/002_outbox.sql, in SQLite's types;
-- alerts is a JSON array in TEXT.
CREATE TABLE outbox (
    id           INTEGER PRIMARY KEY,
    workspace_id TEXT    NOT NULL,
    store_id     TEXT    NOT NULL DEFAULT '',
    tz           TEXT    NOT NULL,
    run_key      TEXT    NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('alert', 'update', 'healed')),
    transport    TEXT    NOT NULL CHECK (transport IN ('webhook', 'bot')),
    window_from  TEXT    NOT NULL CHECK (window_from GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    window_to    TEXT    NOT NULL CHECK (window_to GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    alerts       TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(alerts)),
    repeat_of    INTEGER REFERENCES outbox (id),
    state        TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'posted', 'abandoned')),
    channel      TEXT    NOT NULL DEFAULT '',
    ts           TEXT    NOT NULL DEFAULT '',
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    updated_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    CHECK (window_from <= window_to)
) STRICT;

-- At most one unresolved post per workspace, store and zone.
CREATE UNIQUE INDEX outbox_one_pending_idx ON outbox (workspace_id, store_id, tz) WHERE state = 'pending';
CREATE INDEX outbox_scope_idx ON outbox (workspace_id, store_id, tz, created_at);
