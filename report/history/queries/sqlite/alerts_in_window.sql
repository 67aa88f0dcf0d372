-- What Slack was last told about the days ?4 to ?5 of workspace ?1, store
-- ?2, in zone ?3, healed days included: the state a run's alert decision starts from.
SELECT day, status, severity, api_clicks, local_clicks, delta_clicks,
       healed, unconfirmed, transport, channel, ts, window_from, window_to, run_key
FROM alerts
WHERE workspace_id = ?1 AND store_id = ?2 AND tz = ?3 AND day BETWEEN ?4 AND ?5
ORDER BY day
