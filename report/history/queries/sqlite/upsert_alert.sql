-- Sets what Slack was told about one day. alerted_at keeps the time the
-- gap was first alerted, unless a healed day has become a gap again.
INSERT INTO alerts (
    workspace_id, store_id, tz, day, status, severity, api_clicks, local_clicks, delta_clicks,
    healed, transport, channel, ts, window_from, window_to, run_key
) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
ON CONFLICT (workspace_id, store_id, tz, day) DO UPDATE SET
    status       = excluded.status,
    severity     = excluded.severity,
    api_clicks   = excluded.api_clicks,
    local_clicks = excluded.local_clicks,
    delta_clicks = excluded.delta_clicks,
    alerted_at   = CASE WHEN alerts.healed AND NOT excluded.healed THEN excluded.alerted_at ELSE alerts.alerted_at END,
    healed       = excluded.healed,
    transport    = excluded.transport,
    channel      = excluded.channel,
    ts           = excluded.ts,
    window_from  = excluded.window_from,
    window_to    = excluded.window_to,
    run_key      = excluded.run_key,
    updated_at   = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
