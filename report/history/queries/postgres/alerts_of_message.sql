-- The days of workspace $1 in zone $2 whose newest alert is the Slack
-- message $4 in channel $3: what an edit of that message must show.
SELECT to_char(day, 'YYYY-MM-DD') AS day, status, severity, api_clicks, local_clicks, delta_clicks,
       healed, transport, channel, ts,
       to_char(window_from, 'YYYY-MM-DD') AS window_from, to_char(window_to, 'YYYY-MM-DD') AS window_to, run_key
FROM alerts
WHERE workspace_id = $1 AND tz = $2 AND channel = $3 AND ts = $4
ORDER BY day
