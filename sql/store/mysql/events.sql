-- Reference click store for MySQL 8 and MariaDB 10.6+, "events" form: one row
-- per click.
--
-- clickrecon's events preset counts, for each calendar day in RECON_TZ, the
-- rows whose ts lies in [the day's first instant, the next day's first
-- instant). Those two instants are computed in Go, so DST days are 23 or 25
-- hours long and the server needs no time-zone tables.
--
-- ts is DATETIME(3) holding UTC: write UTC_TIMESTAMP(3), or a UTC time from
-- your application. A DATETIME column that holds local wall-clock times
-- works too: set STORE_TIMESTAMP_TZ to their zone. A TIMESTAMP(3) column
-- works as well, as an instant: clickrecon pins its sessions' time_zone to
-- +00:00, so the server's or a writer's time_zone never changes a count
-- (leave STORE_TIMESTAMP_TZ unset for it).
--
-- link_id holds Elido's link id as written (utf8mb4): clickrecon groups and
-- compares it by its bytes whatever its collation, as Elido's lnk_A and
-- lnk_a, lnk_b and 'lnk_b ' are four links; only a CHAR column, which drops
-- trailing spaces, could not tell them apart.
--
-- You may add columns (the webhook delivery id for idempotent inserts, a
-- user agent...); clickrecon reads only ts, link_id and country_code, and
-- never writes.
CREATE TABLE IF NOT EXISTS clicks (
    id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    ts           DATETIME(3)  NOT NULL,  -- when the click happened, in UTC
    link_id      VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, -- Elido's link id
    country_code CHAR(2)      CHARACTER SET ascii NULL, -- ISO 3166-1 alpha-2 as Elido reports it; NULL when unknown
    -- The count for a day is a range of this index: count(*) reads the
    -- index alone.
    KEY clicks_ts_idx (ts)
) ENGINE = InnoDB;
