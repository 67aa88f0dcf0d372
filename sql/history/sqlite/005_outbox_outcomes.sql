-- One outbox for every message clickrecon posts, and the outcome of each
-- post kept as Slack gave it. The same change as
-- sql/history/postgres/005_outbox_outcomes.sql; SQLite cannot drop or
-- change a CHECK in place, so outbox and slack_messages are rebuilt, every
-- row kept (outbox's ids too: repeat_of refers to them). Applied by
-- `clickrecon migrate` inside one transaction.
CREATE TABLE outbox_new (
    id           INTEGER PRIMARY KEY,
    workspace_id TEXT    NOT NULL,
    store_id     TEXT    NOT NULL DEFAULT '',
    tz           TEXT    NOT NULL,
    run_key      TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    transport    TEXT    NOT NULL CHECK (transport IN ('webhook', 'bot')),
    window_from  TEXT    NOT NULL CHECK (window_from GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    window_to    TEXT    NOT NULL CHECK (window_to GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    alerts       TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(alerts)),
    repeat_of    INTEGER REFERENCES outbox_new (id),
    state        TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'posted', 'unconfirmed', 'abandoned')),
    channel      TEXT    NOT NULL DEFAULT '',
    ts           TEXT    NOT NULL DEFAULT '',
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    updated_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    notice       TEXT    NOT NULL DEFAULT '',
    CHECK (window_from <= window_to)
) STRICT;

INSERT INTO outbox_new (id, workspace_id, store_id, tz, run_key, kind, transport, window_from, window_to,
    alerts, repeat_of, state, channel, ts, created_at, updated_at)
SELECT id, workspace_id, store_id, tz, run_key, kind, transport, window_from, window_to,
    alerts, repeat_of, state, channel, ts, created_at, updated_at
FROM outbox ORDER BY id;

DROP TABLE outbox;
ALTER TABLE outbox_new RENAME TO outbox;
CREATE UNIQUE INDEX outbox_one_pending_idx ON outbox (workspace_id, store_id, tz) WHERE state = 'pending';
CREATE INDEX outbox_scope_idx ON outbox (workspace_id, store_id, tz, created_at);

CREATE TABLE slack_messages_new (
    id           INTEGER PRIMARY KEY,
    run_key      TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    tz           TEXT NOT NULL,
    kind         TEXT NOT NULL,
    action       TEXT NOT NULL CHECK (action IN ('posted', 'updated')),
    transport    TEXT NOT NULL CHECK (transport IN ('webhook', 'bot')),
    channel      TEXT NOT NULL DEFAULT '',
    ts           TEXT NOT NULL DEFAULT '',
    sent_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;

INSERT INTO slack_messages_new (id, run_key, workspace_id, tz, kind, action, transport, channel, ts, sent_at)
SELECT id, run_key, workspace_id, tz, kind, action, transport, channel, ts, sent_at FROM slack_messages ORDER BY id;

DROP TABLE slack_messages;
ALTER TABLE slack_messages_new RENAME TO slack_messages;
CREATE INDEX slack_messages_run_key_idx ON slack_messages (run_key);

-- alerts and notices: unconfirmed counts the posts whose answer was lost
-- that told the row's state (see the PostgreSQL migration).
ALTER TABLE alerts ADD COLUMN unconfirmed INTEGER NOT NULL DEFAULT 0 CHECK (unconfirmed >= 0);
ALTER TABLE notices ADD COLUMN unconfirmed INTEGER NOT NULL DEFAULT 0 CHECK (unconfirmed >= 0);
