-- Clicks per country during one day, from the events schema: rows
-- (country_code, clicks), with NULL for clicks whose country is unknown.
SELECT country_code, count(*) AS clicks
FROM clicks
WHERE ts >= :from
  AND ts < :to
GROUP BY country_code
