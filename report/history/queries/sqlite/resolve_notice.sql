-- Marks the notice of workspace ?1 and store ?2 resolved at ?3 by run ?4:
-- a run checked everything again and told Slack so. ?5 is 1 when the
-- recovery's answer was lost, 0 when Slack accepted it: a notice resolved
-- by a recovery whose answer was lost counts the lost answers
-- (unconfirmed), and one Slack accepted is confirmed. A notice resolved
-- and confirmed is left as it is.
UPDATE notices SET
    resolved_at = COALESCE(resolved_at, ?3),
    run_key     = ?4,
    unconfirmed = CASE WHEN ?5 = 0 THEN 0
                       WHEN resolved_at IS NOT NULL THEN unconfirmed + 1
                       ELSE 1 END
WHERE workspace_id = ?1 AND store_id = ?2 AND (resolved_at IS NULL OR unconfirmed > 0)
