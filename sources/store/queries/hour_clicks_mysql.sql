-- Every click in the half-open range [:from, :to) from the events schema,
-- one row per click (ts, link_id, country_code), for repair: the rows an
-- hour holds, to be compared click by click with Elido's. ts is read as
-- UTC wall-clock text (a DATETIME holding UTC, or a TIMESTAMP in the
-- session's time_zone, pinned to +00:00).
SELECT ts, link_id, country_code
FROM clicks
WHERE ts >= :from
  AND ts < :to
