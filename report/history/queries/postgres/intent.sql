-- The intended Slack post $1, locked until the transaction ends, so that
-- two callers never resolve it twice.
SELECT id, workspace_id, store_id, tz, run_key, kind, transport,
       to_char(window_from, 'YYYY-MM-DD') AS window_from, to_char(window_to, 'YYYY-MM-DD') AS window_to,
       alerts::text AS alerts, COALESCE(repeat_of, 0) AS repeat_of, state, sent_at IS NOT NULL AS sent, channel, ts, notice,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at,
       to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS updated_at
FROM outbox
WHERE id = $1
FOR UPDATE
