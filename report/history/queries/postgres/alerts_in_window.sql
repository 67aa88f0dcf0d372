-- What Slack was last told about the days $3 to $4 of workspace $1 in zone
-- $2, healed days included: the state a run's alert decision starts from.
SELECT to_char(day, 'YYYY-MM-DD') AS day, status, severity, api_clicks, local_clicks, delta_clicks,
       healed, transport, channel, ts,
       to_char(window_from, 'YYYY-MM-DD') AS window_from, to_char(window_to, 'YYYY-MM-DD') AS window_to, run_key
FROM alerts
WHERE workspace_id = $1 AND tz = $2 AND day BETWEEN $3 AND $4
ORDER BY day
