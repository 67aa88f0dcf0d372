-- 007: the clicks each run's own repair stage (REPAIR=apply) put back
-- into the store, by day, as the store kept them (the report's days'
-- "repaired"), for the trend's clicks restored by repair. Runs recorded
-- before repaired nothing that the history knows of: 0.
ALTER TABLE run_days ADD COLUMN repaired_clicks bigint NOT NULL DEFAULT 0;
