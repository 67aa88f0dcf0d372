-- runs: a run's totals are NULL when no day was read on both sides (every
-- day unverifiable), as report.json writes them: a 0 there reads as
-- "Elido counted 0". Runs recorded before this migration with no such day
-- get NULL too. Applied by `clickrecon migrate` inside one transaction.
ALTER TABLE runs
    ALTER COLUMN api_clicks DROP NOT NULL,
    ALTER COLUMN local_clicks DROP NOT NULL,
    ALTER COLUMN delta_clicks DROP NOT NULL;

UPDATE runs SET api_clicks = NULL, local_clicks = NULL, delta_clicks = NULL
WHERE days_match + days_missing + days_surplus + days_provisional = 0;
