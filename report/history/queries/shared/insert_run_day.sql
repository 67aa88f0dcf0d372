-- Records one day's verdict of the run $1.
INSERT INTO run_days (run_id, day, hours, api_clicks, local_clicks, delta_clicks, status, severity, settled, reason, repaired_clicks)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
