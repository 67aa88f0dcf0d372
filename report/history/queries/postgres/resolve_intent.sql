-- Resolves the pending post $1: state $2 (posted, unconfirmed or abandoned), with the
-- channel $3 and ts $4 of the message when it was posted.
UPDATE outbox SET state = $2, channel = $3, ts = $4, updated_at = $5
WHERE id = $1 AND state = 'pending'
