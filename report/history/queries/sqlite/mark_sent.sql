-- Marks the pending post ?1 as handed to Slack, immediately before the
-- post is made; a post no longer pending (another run settled it) is left
-- as it is, and the caller does not post.
UPDATE outbox SET sent_at = ?2, updated_at = ?2
WHERE id = ?1 AND state = 'pending'
