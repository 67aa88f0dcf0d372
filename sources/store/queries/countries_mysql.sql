-- Clicks per country during one day, from the events schema: rows
-- (country_code, clicks), with NULL for clicks whose country is unknown.
-- Grouped by the code's bytes, whatever the column's collation.
SELECT MIN(country_code) AS country_code, count(*) AS clicks
FROM clicks
WHERE ts >= :from
  AND ts < :to
GROUP BY CAST(country_code AS BINARY)
