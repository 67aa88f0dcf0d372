-- Records one run and returns its id, under which its days are recorded.
INSERT INTO runs (
    run_key, workspace_id, tz, window_from, window_to, generated_at, status, interrupted,
    api_clicks, local_clicks, delta_clicks, api_summary,
    days, days_match, days_missing, days_surplus, days_provisional, days_unverifiable, store_id, recorded_at
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
RETURNING id
