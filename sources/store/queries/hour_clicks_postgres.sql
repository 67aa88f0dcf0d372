-- Every click in the half-open range [:from, :to) from the events schema,
-- one row per click (ts, link_id, country_code, wall), for repair: the rows an
-- hour holds, to be compared click by click with Elido's. ts is read as an
-- instant: a timestamp (without time zone) column in the session TimeZone,
-- which the store pins (STORE_TIMESTAMP_TZ). wall is such a column's own
-- wall-clock time, at the millisecond, and NULL for a timestamptz.
SELECT ts::timestamptz AS ts, link_id, country_code,
       CASE WHEN pg_typeof(ts) = 'timestamp without time zone'::regtype
            THEN to_char(ts, 'YYYY-MM-DD HH24:MI:SS.MS') END AS wall
FROM clicks
WHERE ts >= :from::timestamptz
  AND ts < :to::timestamptz
