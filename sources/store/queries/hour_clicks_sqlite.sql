-- Every click in the half-open range [:from, :to) from the events schema,
-- one row per click (ts, link_id, country_code), for repair: the rows an
-- hour holds, to be compared click by click with Elido's. ts is rewritten
-- as RFC 3339 UTC with milliseconds, whatever offset it was stored with.
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ts) AS ts, link_id, country_code
FROM clicks
WHERE julianday(ts) >= julianday(:from)
  AND julianday(ts) < julianday(:to)
