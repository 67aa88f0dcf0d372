-- What Slack was last told about the days $4 to $5 of workspace $1, store
-- $2, in zone $3, healed days included: the state a run's alert decision starts from.
SELECT to_char(day, 'YYYY-MM-DD') AS day, status, severity, api_clicks, local_clicks, delta_clicks,
       healed, unconfirmed, transport, channel, ts,
       to_char(window_from, 'YYYY-MM-DD') AS window_from, to_char(window_to, 'YYYY-MM-DD') AS window_to, run_key
FROM alerts
WHERE workspace_id = $1 AND store_id = $2 AND tz = $3 AND day BETWEEN $4 AND $5
ORDER BY day
