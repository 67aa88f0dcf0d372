-- Every click in the half-open range [:from, :to) from the events schema,
-- one row per click (ts, link_id, country_code), for repair: the rows an
-- hour holds, to be compared click by click with Elido's.
SELECT ts, link_id, country_code
FROM clicks
WHERE ts >= :from::timestamptz
  AND ts < :to::timestamptz
