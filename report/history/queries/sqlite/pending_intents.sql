-- The Slack posts of workspace ?1, store ?2, zone ?3 that were intended and
-- never confirmed or given up: what a run must resolve before it posts.
SELECT id, workspace_id, store_id, tz, run_key, kind, transport, window_from, window_to,
       alerts, COALESCE(repeat_of, 0) AS repeat_of, state, sent_at IS NOT NULL AS sent, channel, ts, notice,
       created_at, updated_at
FROM outbox
WHERE workspace_id = ?1 AND store_id = ?2 AND tz = ?3 AND state = 'pending'
ORDER BY id
