-- The number of rows of the events schema with no click time, one row with
-- one column (clicks): a timestamp or timestamptz ts is always an instant,
-- but a table that allows NULL may hold clicks no day can claim. An index
-- search on ts, or nothing at all when ts is NOT NULL.
SELECT count(*) AS clicks
FROM clicks
WHERE ts IS NULL
