-- 008: when each intended Slack post was handed to Slack (sent_at). A post
-- recorded but never handed over (the run died, or was stopped, between
-- its record and its post) told nothing: the next run gives it up
-- (abandoned) instead of counting what it would have told as told without
-- an answer. Posts recorded before this migration may have been handed
-- over: they are marked sent at their last update. Nothing is deleted.
ALTER TABLE outbox ADD COLUMN sent_at timestamptz;
UPDATE outbox SET sent_at = updated_at WHERE state <> 'abandoned';
