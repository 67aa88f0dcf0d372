-- Clicks per link during one day, from the events schema (one row per click):
-- rows (link_id, clicks). The day is the half-open range [:from, :to) of
-- instants computed in Go and sent as wall-clock times in the session's
-- time_zone, pinned to +00:00 (or, for a DATETIME ts, in STORE_TIMESTAMP_TZ),
-- so the server's own time zone plays no part. A link is its bytes: the
-- rows are grouped by link_id's bytes, whatever the column's collation (a
-- case-insensitive one would merge lnk_A and lnk_a, a PAD SPACE one lnk_b
-- and 'lnk_b '); MIN returns the group's one value, in the column's own
-- character set converted to the connection's.
SELECT MIN(link_id) AS link_id, count(*) AS clicks
FROM clicks
WHERE ts >= :from
  AND ts < :to
GROUP BY CAST(link_id AS BINARY)
