-- The number of clicks in the half-open range [:from, :to), one row with
-- one column (clicks): a day's total for the events preset (a range of the
-- index on ts), and, once per hour of a day, the hourly drill-down.
SELECT count(*) AS clicks
FROM clicks
WHERE ts >= :from
  AND ts < :to
