-- The days from ?2 to ?3 of every run of workspace ?1 ('' for every
-- workspace) whose window meets them, run by run in the order they were
-- recorded: rows (run_id, run_key, workspace_id, store_id, tz,
-- generated_at, day, api_clicks, local_clicks, status, repaired_clicks). The trend keeps
-- one verdict per day, so the rows are read as they come.
SELECT r.id AS run_id, r.run_key, r.workspace_id, r.store_id, r.tz, r.generated_at,
       d.day, d.api_clicks, d.local_clicks, d.status, d.repaired_clicks
FROM runs r
JOIN run_days d ON d.run_id = r.id
WHERE (?1 = '' OR r.workspace_id = ?1)
  AND r.window_to >= ?2 AND r.window_from <= ?3
  AND d.day BETWEEN ?2 AND ?3
ORDER BY r.id, d.day
