-- Every click in the half-open range [:from, :to) from the events schema,
-- one row per click (ts, link_id, country_code), for repair: the rows an
-- hour holds, to be compared click by click with Elido's. ts is read as an
-- instant: a timestamp (without time zone) column in the session TimeZone,
-- which the store pins (STORE_TIMESTAMP_TZ).
SELECT ts::timestamptz AS ts, link_id, country_code
FROM clicks
WHERE ts >= :from::timestamptz
  AND ts < :to::timestamptz
