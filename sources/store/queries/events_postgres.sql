-- Clicks per link during one day, from the events schema (one row per click):
-- rows (link_id, clicks). The day is the half-open range [:from, :to) of
-- instants computed in Go, so the session TimeZone plays no part. A link
-- is its bytes: link_id is grouped as text in the "C" collation, byte for
-- byte, whatever the column's own (a nondeterministic ICU collation would
-- merge lnk_A and lnk_a, or NFC and NFD; citext compares case-blind).
SELECT link_id::text COLLATE "C" AS link_id, count(*) AS clicks
FROM clicks
WHERE ts >= :from::timestamptz
  AND ts < :to::timestamptz
GROUP BY 1
