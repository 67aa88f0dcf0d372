-- Clicks per country during one day, from the events schema: rows
-- (country_code, clicks), with NULL for clicks whose country is unknown.
-- Grouped byte for byte (BINARY), whatever the column's collation.
SELECT country_code, count(*) AS clicks
FROM clicks
WHERE julianday(ts) >= julianday(:from)
  AND julianday(ts) < julianday(:to)
GROUP BY country_code COLLATE BINARY
