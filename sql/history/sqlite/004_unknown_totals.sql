-- runs: a run's totals are NULL when no day was read on both sides (every
-- day unverifiable), as report.json writes them: a 0 there reads as
-- "Elido counted 0". Runs recorded before this migration with no such day
-- get NULL too. SQLite cannot drop NOT NULL in place, so runs is rebuilt,
-- and run_days with it: foreign keys are on, and dropping runs first
-- would delete every day through ON DELETE CASCADE. Renaming runs_new
-- rewrites run_days_new's reference to it. Applied by `clickrecon
-- migrate` inside one transaction.
CREATE TABLE runs_new (
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
    api_clicks        INTEGER,          -- totals over the days both sides were read; NULL when none was
    local_clicks      INTEGER,
    delta_clicks      INTEGER,
    api_summary       INTEGER,          -- Elido's /summary; NULL when not read
    days              INTEGER NOT NULL,
    days_match        INTEGER NOT NULL,
    days_missing      INTEGER NOT NULL,
    days_surplus      INTEGER NOT NULL,
    days_provisional  INTEGER NOT NULL,
    days_unverifiable INTEGER NOT NULL,
    CHECK (window_from <= window_to)
) STRICT;

INSERT INTO runs_new (id, run_key, workspace_id, tz, window_from, window_to, generated_at, recorded_at,
    status, interrupted, api_clicks, local_clicks, delta_clicks, api_summary,
    days, days_match, days_missing, days_surplus, days_provisional, days_unverifiable)
SELECT id, run_key, workspace_id, tz, window_from, window_to, generated_at, recorded_at,
    status, interrupted,
    CASE WHEN days_match + days_missing + days_surplus + days_provisional > 0 THEN api_clicks END,
    CASE WHEN days_match + days_missing + days_surplus + days_provisional > 0 THEN local_clicks END,
    CASE WHEN days_match + days_missing + days_surplus + days_provisional > 0 THEN delta_clicks END,
    api_summary, days, days_match, days_missing, days_surplus, days_provisional, days_unverifiable
FROM runs;

CREATE TABLE run_days_new (
    run_id       INTEGER NOT NULL REFERENCES runs_new (id) ON DELETE CASCADE,
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

INSERT INTO run_days_new (run_id, day, hours, api_clicks, local_clicks, delta_clicks, status, severity, settled, reason)
SELECT run_id, day, hours, api_clicks, local_clicks, delta_clicks, status, severity, settled, reason FROM run_days;

DROP TABLE run_days;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
ALTER TABLE run_days_new RENAME TO run_days;

CREATE INDEX runs_workspace_tz_idx ON runs (workspace_id, tz);
CREATE INDEX runs_run_key_idx ON runs (run_key);
CREATE INDEX run_days_day_idx ON run_days (day);
