-- outbox: every Slack post a run is about to make, recorded before it is
-- made (pending) and marked after Slack answered (posted, with channel and
-- ts), or given up (abandoned: a rerun found it was never delivered). A
-- rerun resolves a pending row before posting anything, so a post whose
-- answer never came (a crash, a stalled webhook, SIGTERM, a lost history)
-- is not repeated blindly. alerts holds the days of the post as the rows
-- MarkPosted writes into alerts, in one transaction with the state change:
-- a posted intent always counts as alerted.
CREATE TABLE outbox (
    id           bigserial   PRIMARY KEY,
    workspace_id text        NOT NULL,
    store_id     text        NOT NULL DEFAULT '',
    tz           text        NOT NULL,
    run_key      text        NOT NULL,
    kind         text        NOT NULL CHECK (kind IN ('alert', 'update', 'healed')),
    transport    text        NOT NULL CHECK (transport IN ('webhook', 'bot')),
    window_from  date        NOT NULL,
    window_to    date        NOT NULL,
    alerts       jsonb       NOT NULL DEFAULT '[]', -- the days shown and their numbers
    repeat_of    bigint      REFERENCES outbox (id), -- the unconfirmed post this one may repeat
    state        text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'posted', 'abandoned')),
    channel      text        NOT NULL DEFAULT '',
    ts           text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CHECK (window_from <= window_to)
);

-- At most one unresolved post per workspace, store and zone: a run that
-- finds one must resolve it before it may intend another.
CREATE UNIQUE INDEX outbox_one_pending_idx ON outbox (workspace_id, store_id, tz) WHERE state = 'pending';
CREATE INDEX outbox_scope_idx ON outbox (workspace_id, store_id, tz, created_at);
