-- The totals of a run of days from the daily schema, one statement for the
-- whole run: one row (day, clicks) per day from :first to :last that has
-- counters, day as YYYY-MM-DD text whatever the session's DateStyle; a day
-- without rows is absent and counts 0. One range of the primary key
-- (day, link_id), or for most of the table one parallel sequential scan,
-- instead of one search and one round trip per day. sum(bigint) is
-- numeric, read as a whole number.
SELECT to_char(click_counts.day, 'YYYY-MM-DD') AS day, coalesce(sum(clicks), 0) AS clicks
FROM click_counts
WHERE click_counts.day BETWEEN :first::date AND :last::date
GROUP BY click_counts.day
