-- The diagnoses of the days from $2 to $3 of every run of workspace $1
-- ('' for every workspace) whose window meets them: rows (run_id, day,
-- kind, clicks). Only gap days have any, so they are few.
SELECT g.run_id, to_char(g.day, 'YYYY-MM-DD') AS day, g.kind, g.clicks
FROM run_diagnoses g
JOIN runs r ON r.id = g.run_id
WHERE ($1 = '' OR r.workspace_id = $1)
  AND r.window_to >= $2 AND r.window_from <= $3
  AND g.day BETWEEN $2 AND $3
