-- Reference click store for MySQL 8 and MariaDB 10.6+, "daily" form: one
-- counter per link and calendar day.
--
-- day is the calendar day in RECON_TZ (the zone clickrecon reconciles in),
-- not in UTC and not in the server's time_zone: whatever increments the
-- counter must compute the day in that zone. clickrecon's daily preset reads
-- the rows of one day (day = :day) and never writes.
CREATE TABLE IF NOT EXISTS click_counts (
    day     DATE         NOT NULL,  -- calendar day in RECON_TZ
    link_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, -- Elido's link id
    clicks  BIGINT       NOT NULL CHECK (clicks >= 0), -- clicks on link_id during day
    PRIMARY KEY (day, link_id)
) ENGINE = InnoDB;
