-- clickrecon's own tables in HISTORY_DSN (PostgreSQL): run history and the
-- state of Slack alerts. Applied by `clickrecon migrate` inside one
-- transaction, after which the version 001_history is recorded in
-- schema_migrations. Never edit a released migration: add 002_... instead.

-- runs: one row per recorded run (dry runs are never recorded). run_key is
-- not unique: a rerun of a window has the same key and its own row.
CREATE TABLE runs (
    id                bigserial   PRIMARY KEY,
    run_key           text        NOT NULL,
    workspace_id      text        NOT NULL,
    tz                text        NOT NULL,
    window_from       date        NOT NULL,
    window_to         date        NOT NULL,
    generated_at      timestamptz NOT NULL,
    recorded_at       timestamptz NOT NULL DEFAULT now(),
    status            text        NOT NULL,
    interrupted       text        NOT NULL DEFAULT '',
    api_clicks        bigint      NOT NULL, -- totals over the days both sides were read
    local_clicks      bigint      NOT NULL,
    delta_clicks      bigint      NOT NULL,
    api_summary       bigint,               -- Elido's /summary; NULL when not read
    days              integer     NOT NULL,
    days_match        integer     NOT NULL,
    days_missing      integer     NOT NULL,
    days_surplus      integer     NOT NULL,
    days_provisional  integer     NOT NULL,
    days_unverifiable integer     NOT NULL,
    CHECK (window_from <= window_to)
);

CREATE INDEX runs_workspace_tz_idx ON runs (workspace_id, tz);
CREATE INDEX runs_run_key_idx ON runs (run_key);

-- run_days: each run's verdict per day. A count that was not known is NULL.
CREATE TABLE run_days (
    run_id       bigint           NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    day          date             NOT NULL,
    hours        double precision NOT NULL,
    api_clicks   bigint,
    local_clicks bigint,
    delta_clicks bigint,
    status       text             NOT NULL,
    severity     text             NOT NULL,
    settled      boolean          NOT NULL,
    reason       text             NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, day)
);

-- Revisions look up the latest earlier reading of each day.
CREATE INDEX run_days_day_idx ON run_days (day);

-- slack_messages: every Slack message posted or edited, for the record.
-- channel and ts are empty for an incoming webhook, which returns neither.
CREATE TABLE slack_messages (
    id           bigserial   PRIMARY KEY,
    run_key      text        NOT NULL,
    workspace_id text        NOT NULL,
    tz           text        NOT NULL,
    kind         text        NOT NULL CHECK (kind IN ('alert', 'update', 'healed')),
    action       text        NOT NULL CHECK (action IN ('posted', 'updated')),
    transport    text        NOT NULL CHECK (transport IN ('webhook', 'bot')),
    channel      text        NOT NULL DEFAULT '',
    ts           text        NOT NULL DEFAULT '',
    sent_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX slack_messages_run_key_idx ON slack_messages (run_key);

-- alerts: what Slack was last told about each day of a workspace and zone,
-- the key of de-duplication. A day is alerted again only when its status or
-- counts change; healed marks a day alerted as a gap that later matched.
-- channel and ts name the newest message that shows the day (empty for a
-- webhook), the one a later run edits in place; window_from and window_to
-- are that message's window.
CREATE TABLE alerts (
    store_id     text        NOT NULL DEFAULT '', -- the report's store_id: two stores of one workspace keep apart
    workspace_id text        NOT NULL,
    tz           text        NOT NULL,
    day          date        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('missing', 'surplus')),
    severity     text        NOT NULL,
    api_clicks   bigint      NOT NULL, -- the counts as alerted
    local_clicks bigint      NOT NULL,
    delta_clicks bigint      NOT NULL,
    healed       boolean     NOT NULL DEFAULT false,
    transport    text        NOT NULL CHECK (transport IN ('webhook', 'bot')),
    channel      text        NOT NULL DEFAULT '',
    ts           text        NOT NULL DEFAULT '',
    window_from  date        NOT NULL,
    window_to    date        NOT NULL,
    run_key      text        NOT NULL, -- the run that last changed the row
    alerted_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, store_id, tz, day)
);

CREATE INDEX alerts_message_idx ON alerts (channel, ts) WHERE ts <> '';
