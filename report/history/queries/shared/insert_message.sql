-- Records a Slack message posted or edited by the run $1.
INSERT INTO slack_messages (run_key, workspace_id, tz, kind, action, transport, channel, ts, sent_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
