-- Clicks per link during one day, from the events schema (one row per click):
-- rows (link_id, clicks). ts is RFC 3339 text with any offset; julianday()
-- turns both sides into instants, and the expression index on julianday(ts)
-- makes the half-open range [:from, :to) an index search. A link is its
-- bytes: GROUP BY compares in the column's collation (NOCASE, RTRIM) unless
-- told BINARY.
SELECT link_id, count(*) AS clicks
FROM clicks
WHERE julianday(ts) >= julianday(:from)
  AND julianday(ts) < julianday(:to)
GROUP BY link_id COLLATE BINARY
