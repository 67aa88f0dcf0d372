-- Records a Slack post that is about to be made, as pending, and returns
-- its id. The partial unique index outbox_one_pending_idx refuses a second
-- pending post for the same workspace $1, store $2 and zone $3. $12 is the
-- run's clock; $13 and $14 the message an edit changes ('' for a new post).
INSERT INTO outbox (workspace_id, store_id, tz, run_key, kind, transport, window_from, window_to, alerts, repeat_of, notice,
                    created_at, updated_at, channel, ts)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13, $14)
RETURNING id
