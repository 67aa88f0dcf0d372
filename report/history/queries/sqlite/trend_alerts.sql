-- When Slack was first told of each alerted day from ?2 to ?3 of workspace
-- ?1 ('' for every workspace), and, for a day told healed, when: rows
-- (workspace_id, store_id, tz, day, alerted_at, healed, updated_at).
SELECT workspace_id, store_id, tz, day, alerted_at, healed, updated_at
FROM alerts
WHERE (?1 = '' OR workspace_id = ?1) AND day BETWEEN ?2 AND ?3
