-- Reference click store for SQLite, "events" form: one row per click.
--
-- SQLite has no timestamptz, so ts is TEXT holding an RFC 3339 timestamp
-- with an explicit offset and at most millisecond precision, for example
-- 2026-11-28T23:59:58.123Z or 2026-11-29T00:59:58.123+01:00 (in Go:
-- t.Format("2006-01-02T15:04:05.000Z07:00"); modernc.org/sqlite with
-- _time_format=sqlite also writes a valid form). A space may replace the T.
-- Any offset is fine: rows are compared as instants through julianday(ts),
-- never as strings. SQLite keeps milliseconds and ignores (truncates) any
-- further digits.
--
-- clickrecon passes the day's bounds :from and :to as RFC 3339 UTC strings
-- with millisecond precision (2026-11-26T23:00:00.000Z) and counts the rows
-- with julianday(:from) <= julianday(ts) < julianday(:to), so that a click
-- at 23:59:59.999 belongs to that day and one at 00:00:00.000 to the next.
-- The index below is on that same expression, so the range is an index
-- search.
--
-- The CHECK rejects at insert time what would otherwise be miscounted
-- silently: no offset (2026-11-28T23:59:58 would be read as UTC), an offset
-- without a colon, lower-case t or z, and anything julianday cannot read.
--
-- You may add columns (an id, a delivery id...); clickrecon reads only ts,
-- link_id and country_code, and opens the file read-only.
CREATE TABLE IF NOT EXISTS clicks (
    ts           TEXT NOT NULL CHECK (
                     ts GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'
                     AND (ts GLOB '*Z' OR ts GLOB '*[+-][0-9][0-9]:[0-9][0-9]')
                     AND julianday(ts) IS NOT NULL
                 ),
    link_id      TEXT NOT NULL, -- Elido's link id
    country_code TEXT           -- ISO 3166-1 alpha-2 as Elido reports it; NULL when unknown
);

CREATE INDEX IF NOT EXISTS clicks_ts_instant_idx ON clicks (julianday(ts));
