-- The number of clicks in the half-open range [:from, :to), one row with
-- one column (clicks): the hourly drill-down runs it once per hour of a day.
SELECT count(*) AS clicks
FROM clicks
WHERE julianday(ts) >= julianday(:from)
  AND julianday(ts) < julianday(:to)
