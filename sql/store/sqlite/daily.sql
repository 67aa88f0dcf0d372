-- Reference click store for SQLite, "daily" form: one counter per link and
-- calendar day.
--
-- day is TEXT in YYYY-MM-DD form, the calendar day in RECON_TZ (the zone
-- clickrecon reconciles in), not in UTC: whatever increments the counter
-- must compute the day in that zone. clickrecon's daily preset reads the
-- rows with day = :day, :day being passed as that same YYYY-MM-DD text.
-- (Custom queries also receive :from and :to, the day's bounds, as RFC 3339
-- UTC strings with millisecond precision such as 2026-11-26T23:00:00.000Z.)
--
-- clickrecon opens the file read-only and never writes.
CREATE TABLE IF NOT EXISTS click_counts (
    day     TEXT    NOT NULL CHECK (
                day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' AND date(day) = day
            ),
    link_id TEXT    NOT NULL, -- Elido's link id
    clicks  INTEGER NOT NULL CHECK (typeof(clicks) = 'integer' AND clicks >= 0),
    PRIMARY KEY (day, link_id)
);
