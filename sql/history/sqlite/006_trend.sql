-- 006: what a trend across nights needs that the runs did not keep (see
-- clickrecon trend): the store each run read (the report's store_id; ''
-- for the runs recorded before, which the trend gives the one store of
-- their workspace and zone when there is only one), and each day's
-- diagnoses with the clicks they explain. Nothing recorded before is
-- changed.
ALTER TABLE runs ADD COLUMN store_id TEXT NOT NULL DEFAULT '';

-- The trend reads the runs whose window meets its range.
CREATE INDEX runs_trend_idx ON runs (workspace_id, window_to, window_from);

-- run_diagnoses: the diagnoses of each run's gap days, summed by kind.
CREATE TABLE run_diagnoses (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    day    TEXT    NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    kind   TEXT    NOT NULL,
    clicks INTEGER NOT NULL,
    PRIMARY KEY (run_id, day, kind)
) STRICT;
