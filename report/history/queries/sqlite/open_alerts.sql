-- The days of workspace ?1, store ?2, in zone ?3, from ?4 to ?5, whose gap
-- Slack was told of and not yet told healed, or whose heal was told once
-- without an answer: what a run re-checks beyond its window, so that a
-- day healed after it left the window is still told healed.
SELECT day
FROM alerts
WHERE workspace_id = ?1 AND store_id = ?2 AND tz = ?3 AND day BETWEEN ?4 AND ?5
  AND (healed = 0 OR unconfirmed = 1)
ORDER BY day
