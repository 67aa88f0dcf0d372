-- What Slack was last told about the days ?3 to ?4 of workspace ?1 in zone
-- ?2, healed days included: the state a run's alert decision starts from.
SELECT day, status, severity, api_clicks, local_clicks, delta_clicks,
       healed, transport, channel, ts, window_from, window_to, run_key
FROM alerts
WHERE workspace_id = ?1 AND tz = ?2 AND day BETWEEN ?3 AND ?4
ORDER BY day
