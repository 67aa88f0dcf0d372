-- Elido's count of each day from $3 to $4, as the latest recorded run of
-- workspace $1 in zone $2 read it once the day had settled: rows (day,
-- api_clicks, run_key, generated_at). A provisional reading is left out, as
-- a count still growing is late data, not a revision.
SELECT day, api_clicks, run_key, generated_at
FROM (
    SELECT to_char(d.day, 'YYYY-MM-DD') AS day,
           d.api_clicks,
           r.run_key,
           to_char(r.generated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS generated_at,
           row_number() OVER (PARTITION BY d.day ORDER BY r.id DESC) AS n
    FROM run_days d
    JOIN runs r ON r.id = d.run_id
    WHERE r.workspace_id = $1
      AND r.tz = $2
      AND d.day BETWEEN $3 AND $4
      AND d.settled
      AND d.api_clicks IS NOT NULL
) latest
WHERE n = 1
ORDER BY day
