-- Clicks per link during one day, from the events schema (one row per click):
-- rows (link_id, clicks). The day is the half-open range [:from, :to) of
-- instants computed in Go, so the session TimeZone plays no part.
SELECT link_id, count(*) AS clicks
FROM clicks
WHERE ts >= :from::timestamptz
  AND ts < :to::timestamptz
GROUP BY link_id
