-- Reference click store for MySQL 8 and MariaDB 10.6+, "daily" form: one
-- counter per link and calendar day.
--
-- day is the calendar day in RECON_TZ (the zone clickrecon reconciles in),
-- not in UTC and not in the server's time_zone: whatever increments the
-- counter must compute the day in that zone. clickrecon's daily preset reads
-- the rows of one day (day = :day) and never writes.
--
-- link_id is the link id's UTF-8 bytes, compared as bytes: Elido's lnk_A
-- and lnk_a, lnk_b and 'lnk_b ' are four links, and the primary key must
-- keep four counters. A case-insensitive collation (the server's default)
-- would merge the first two, and a _bin one the last two (utf8mb4_bin is
-- PAD SPACE on MariaDB); MariaDB's utf8mb4_nopad_bin and MySQL 8's
-- utf8mb4_0900_bin keep them apart too. clickrecon refuses the per-link
-- counts of a key that merges (docs/stores.md).
CREATE TABLE IF NOT EXISTS click_counts (
    day     DATE         NOT NULL,  -- calendar day in RECON_TZ
    link_id VARBINARY(1020) NOT NULL, -- Elido's link id: up to 255 characters of UTF-8
    clicks  BIGINT       NOT NULL CHECK (clicks >= 0), -- clicks on link_id during day
    PRIMARY KEY (day, link_id)
) ENGINE = InnoDB;
