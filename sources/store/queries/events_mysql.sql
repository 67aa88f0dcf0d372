-- Clicks per link during one day, from the events schema (one row per click):
-- rows (link_id, clicks). The day is the half-open range [:from, :to) of
-- instants computed in Go and sent as wall-clock times in the session's
-- time_zone, pinned to +00:00 (or, for a DATETIME ts, in STORE_TIMESTAMP_TZ),
-- so the server's own time zone plays no part.
SELECT link_id, count(*) AS clicks
FROM clicks
WHERE ts >= :from
  AND ts < :to
GROUP BY link_id
