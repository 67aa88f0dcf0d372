-- Records a notice posted for workspace $1 and store $2 with causes $3.
-- first_posted is kept while the same failure goes on (a reminder), and
-- starts over when the row was resolved or its causes changed. $7 is 1
-- when the post's answer was lost, 0 when Slack accepted it (unconfirmed:
-- see upsert_alert).
INSERT INTO notices (workspace_id, store_id, fingerprint, reason, run_key, first_posted, last_posted, resolved_at, unconfirmed)
VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $6::timestamptz, NULL, $7)
ON CONFLICT (workspace_id, store_id) DO UPDATE SET
    first_posted = CASE WHEN notices.resolved_at IS NULL AND notices.fingerprint = excluded.fingerprint
                        THEN notices.first_posted ELSE excluded.first_posted END,
    fingerprint  = excluded.fingerprint,
    reason       = excluded.reason,
    run_key      = excluded.run_key,
    last_posted  = excluded.last_posted,
    resolved_at  = NULL,
    unconfirmed  = CASE WHEN excluded.unconfirmed = 0 THEN 0
                        WHEN notices.resolved_at IS NULL AND notices.fingerprint = excluded.fingerprint AND notices.unconfirmed > 0
                        THEN notices.unconfirmed + 1
                        ELSE 1 END
