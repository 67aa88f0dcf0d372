-- Marks the open notice of workspace ?1 and store ?2 resolved at ?3: a run
-- checked everything again and Slack was told.
UPDATE notices SET resolved_at = ?3, run_key = ?4
WHERE workspace_id = ?1 AND store_id = ?2 AND resolved_at IS NULL
