-- The notice state of workspace ?1 and store ?2: the causes last posted,
-- when, and whether a later run said checking works again.
SELECT fingerprint, reason, run_key, unconfirmed, first_posted, last_posted, COALESCE(resolved_at, '') AS resolved_at
FROM notices
WHERE workspace_id = ?1 AND store_id = ?2
