-- The intended Slack post ?1 (the caller's transaction holds SQLite's write
-- lock, so no one else resolves it meanwhile).
SELECT id, workspace_id, store_id, tz, run_key, kind, transport, window_from, window_to,
       alerts, COALESCE(repeat_of, 0) AS repeat_of, state, sent_at IS NOT NULL AS sent, channel, ts, notice,
       created_at, updated_at
FROM outbox
WHERE id = ?1
