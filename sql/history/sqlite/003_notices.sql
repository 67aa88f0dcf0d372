-- notices: the short Slack notice a run posts when it could not check what
-- it was asked to. The same table as sql/history/postgres/003_notices.sql,
-- in SQLite's types: instants are TEXT in RFC 3339 UTC.
CREATE TABLE notices (
    workspace_id TEXT NOT NULL,
    store_id     TEXT NOT NULL DEFAULT '',
    fingerprint  TEXT NOT NULL,
    reason       TEXT NOT NULL,
    run_key      TEXT NOT NULL,
    first_posted TEXT NOT NULL,
    last_posted  TEXT NOT NULL,
    resolved_at  TEXT,
    PRIMARY KEY (workspace_id, store_id)
) STRICT;
