-- Records the clicks the diagnoses of kind $3 explain on day $2 of run $1.
INSERT INTO run_diagnoses (run_id, day, kind, clicks) VALUES ($1, $2, $3, $4)
