-- Reference click store for PostgreSQL, "daily" form: one counter per link
-- and calendar day.
--
-- day is the calendar day in RECON_TZ (the zone clickrecon reconciles in),
-- not in UTC and not in the database's TimeZone: whatever increments the
-- counter must compute the day in that zone. clickrecon's daily preset reads
-- the rows of one day (day = :day) and never writes.
CREATE TABLE IF NOT EXISTS click_counts (
    day     date   NOT NULL,                      -- calendar day in RECON_TZ
    link_id text   NOT NULL,                      -- Elido's link id
    clicks  bigint NOT NULL CHECK (clicks >= 0),  -- clicks on link_id during day
    PRIMARY KEY (day, link_id)
);
