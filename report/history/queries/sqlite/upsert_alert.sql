-- Sets what Slack was told about one day. alerted_at keeps the time the
-- gap was first alerted, unless a healed day has become a gap again.
-- ?18 is the run's clock: alerted_at and updated_at are its times.
-- ?17 is 1 when the post's answer was lost, 0 when Slack accepted it:
-- unconfirmed counts the lost answers that told the row's state (the same
-- status, numbers and heal), and a state Slack accepted, or confirmed
-- before, stays confirmed.
INSERT INTO alerts (
    workspace_id, store_id, tz, day, status, severity, api_clicks, local_clicks, delta_clicks,
    healed, transport, channel, ts, window_from, window_to, run_key, unconfirmed, alerted_at, updated_at
) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?18)
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
    unconfirmed  = CASE WHEN excluded.unconfirmed = 0 THEN 0
                        WHEN alerts.status = excluded.status AND alerts.api_clicks = excluded.api_clicks
                             AND alerts.local_clicks = excluded.local_clicks AND alerts.healed = excluded.healed
                        THEN CASE WHEN alerts.unconfirmed > 0 THEN alerts.unconfirmed + 1 ELSE 0 END
                        ELSE 1 END,
    updated_at   = excluded.updated_at
