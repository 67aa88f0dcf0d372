-- One day's total from the daily schema: one row with one column (clicks),
-- the sum of the day's counters (0 for a day without rows). A search of the
-- primary key (day, link_id); sum(bigint) is a DECIMAL, read as a whole
-- number.
SELECT coalesce(sum(clicks), 0) AS clicks
FROM click_counts
WHERE day = :day
