-- Reference click store for PostgreSQL, "events" form: one row per click.
--
-- clickrecon's events preset counts, for each calendar day in RECON_TZ, the
-- rows whose ts lies in [the day's first instant, the next day's first
-- instant). Those two instants are computed in Go and passed as timestamptz,
-- so DST days are 23 or 25 hours long and the session TimeZone never matters.
-- ts should be timestamptz (an instant). A timestamp (without time zone)
-- column works too: clickrecon pins its sessions' TimeZone, so it is read as
-- UTC (or in STORE_TIMESTAMP_TZ, if it holds local wall-clock times), never
-- in the database's own TimeZone.
--
-- You may add columns (an id, the webhook delivery id for idempotent
-- inserts, a user agent...); clickrecon reads only ts, link_id and
-- country_code, and never writes.
CREATE TABLE IF NOT EXISTS clicks (
    ts           timestamptz NOT NULL, -- when the click happened
    link_id      text        NOT NULL, -- Elido's link id
    country_code text                  -- ISO 3166-1 alpha-2 as Elido reports it; NULL when unknown
);

-- The count for a day is a range scan on ts.
CREATE INDEX IF NOT EXISTS clicks_ts_idx ON clicks (ts);
