-- The totals of a run of days from the daily schema, one statement for the
-- whole run: one row (day, clicks) per day from :first to :last that has
-- counters; a day without rows is absent and counts 0. day is YYYY-MM-DD
-- text (the schema checks it), so the text range is the date range and one
-- range of the primary key (day, link_id) reads it.
SELECT day, coalesce(sum(clicks), 0) AS clicks
FROM click_counts
WHERE day BETWEEN :first AND :last
GROUP BY day
