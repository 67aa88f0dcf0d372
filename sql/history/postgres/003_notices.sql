-- notices: the short Slack notice a run posts when it could not check what
-- it was asked to (Elido or the store unreadable, settled days
-- unverifiable), one row per workspace and store. fingerprint names the
-- causes last posted (elido:http_401, store:unreachable, ...), so that the
-- same causes on the following nights stay quiet (a reminder after a week
-- at most); resolved_at is set when a run checked everything again and
-- said so. A new failure after that starts the row over.
CREATE TABLE notices (
    workspace_id text        NOT NULL,
    store_id     text        NOT NULL DEFAULT '',
    fingerprint  text        NOT NULL,
    reason       text        NOT NULL, -- as posted, secrets removed
    run_key      text        NOT NULL, -- the run that last posted
    first_posted timestamptz NOT NULL,
    last_posted  timestamptz NOT NULL,
    resolved_at  timestamptz,          -- NULL while the failure lasts
    PRIMARY KEY (workspace_id, store_id)
);
