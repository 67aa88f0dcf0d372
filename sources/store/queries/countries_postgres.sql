-- Clicks per country during one day, from the events schema: rows
-- (country_code, clicks), with NULL for clicks whose country is unknown.
-- Grouped byte for byte (the "C" collation), whatever the column's own.
SELECT country_code::text COLLATE "C" AS country_code, count(*) AS clicks
FROM clicks
WHERE ts >= :from::timestamptz
  AND ts < :to::timestamptz
GROUP BY 1
