-- The zone, other than $3, that the days $4 to $5 of workspace $1, store $2
-- were last alerted under, when none of those days was alerted under $3:
-- RECON_TZ changed since, and the first alert under the new zone says so.
SELECT tz
FROM alerts
WHERE workspace_id = $1 AND store_id = $2 AND tz <> $3 AND day BETWEEN $4 AND $5
  AND NOT EXISTS (
      SELECT 1 FROM alerts
      WHERE workspace_id = $1 AND store_id = $2 AND tz = $3 AND day BETWEEN $4 AND $5)
ORDER BY updated_at DESC, tz
LIMIT 1
