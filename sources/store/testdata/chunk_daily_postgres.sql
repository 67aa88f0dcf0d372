-- Measured, not used (BenchmarkPostgresTotals: slower than one statement
-- per day wherever days have clicks). The totals of a chunk of days from
-- the daily schema, in one statement:
-- rows (i, clicks), i numbering the days of the array $1 from 1. Each sum
-- is a search of the primary key (day, link_id), as the one-day query is;
-- one round trip instead of one per day.
SELECT b.i, (SELECT coalesce(sum(clicks), 0) FROM click_counts WHERE day = b.d) AS clicks
FROM unnest($1::date[]) WITH ORDINALITY AS b (d, i)
