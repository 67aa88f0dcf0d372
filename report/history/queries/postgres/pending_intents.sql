-- The Slack posts of workspace $1, store $2, zone $3 that were intended and
-- never confirmed or given up: what a run must resolve before it posts.
SELECT id, workspace_id, store_id, tz, run_key, kind, transport,
       to_char(window_from, 'YYYY-MM-DD') AS window_from, to_char(window_to, 'YYYY-MM-DD') AS window_to,
       alerts::text AS alerts, COALESCE(repeat_of, 0) AS repeat_of, state, sent_at IS NOT NULL AS sent, channel, ts, notice,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at,
       to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS updated_at
FROM outbox
WHERE workspace_id = $1 AND store_id = $2 AND tz = $3 AND state = 'pending'
ORDER BY id
