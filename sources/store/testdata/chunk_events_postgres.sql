-- Measured, not used (BenchmarkPostgresTotals: slower than one statement
-- per day wherever days have clicks). The totals of a chunk of days from
-- the events schema, in one statement:
-- rows (i, clicks), i numbering the days of the arrays $1 (each day's first
-- instant) and $2 (the next day's first instant) from 1. Each count is a
-- range search of the ts index, as the one-day query is; one round trip
-- instead of one per day.
SELECT b.i, (SELECT count(*) FROM clicks WHERE ts >= b.f AND ts < b.t) AS clicks
FROM unnest($1::timestamptz[], $2::timestamptz[]) WITH ORDINALITY AS b (f, t, i)
