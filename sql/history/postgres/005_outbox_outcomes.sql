-- One outbox for every message clickrecon posts, and the outcome of each
-- post kept as Slack gave it. Applied by `clickrecon migrate` inside one
-- transaction; every row is kept.
--
-- outbox: a post's kind is any kind clickrecon names (alert, update,
-- healed, notice, reminder, recovery, ...), checked by the code, so that a
-- new kind needs no migration; a post whose answer was lost is settled as
-- unconfirmed (it may be in the channel), apart from one Slack accepted
-- (posted) and one it refused or that never arrived (abandoned). notice
-- is what a notice, a reminder or a recovery (or an alert that tells a
-- notice's cause) records in notices once it is settled, as JSON; '' for
-- none.
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox DROP CONSTRAINT outbox_state_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_state_check CHECK (state IN ('pending', 'posted', 'unconfirmed', 'abandoned'));
ALTER TABLE outbox ADD COLUMN notice text NOT NULL DEFAULT '';

-- slack_messages: every kind of message is recorded.
ALTER TABLE slack_messages DROP CONSTRAINT slack_messages_kind_check;

-- alerts and notices: unconfirmed counts the posts whose answer was lost
-- that told the row's state (its status and numbers, or its heal; a
-- notice's causes, or its recovery); 0 once Slack accepted one. A state
-- told once without an answer is told once more, marked as a possible
-- repeat; one told twice so is taken as told.
ALTER TABLE alerts ADD COLUMN unconfirmed integer NOT NULL DEFAULT 0 CHECK (unconfirmed >= 0);
ALTER TABLE notices ADD COLUMN unconfirmed integer NOT NULL DEFAULT 0 CHECK (unconfirmed >= 0);
