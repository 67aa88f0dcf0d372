-- The notice state of workspace $1 and store $2: the causes last posted,
-- when, and whether a later run said checking works again.
SELECT fingerprint, reason, run_key, unconfirmed,
       to_char(first_posted AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS first_posted,
       to_char(last_posted AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS last_posted,
       COALESCE(to_char(resolved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), '') AS resolved_at
FROM notices
WHERE workspace_id = $1 AND store_id = $2
