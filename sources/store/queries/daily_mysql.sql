-- Clicks per link for one day, from the daily schema (a counter per link and
-- day in RECON_TZ): rows (link_id, clicks).
SELECT link_id, clicks
FROM click_counts
WHERE day = :day
