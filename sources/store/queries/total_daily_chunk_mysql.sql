-- The totals of a run of days from the daily schema, one statement for the
-- whole run: one row (day, clicks) per day from :first to :last that has
-- counters, day as YYYY-MM-DD text; a day without rows is absent and
-- counts 0. One range of the primary key (day, link_id).
SELECT DATE_FORMAT(click_counts.day, '%Y-%m-%d') AS day, coalesce(sum(clicks), 0) AS clicks
FROM click_counts
WHERE click_counts.day BETWEEN :first AND :last
GROUP BY click_counts.day
