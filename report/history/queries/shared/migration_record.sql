-- Records that the migration $1 (its file name without .sql) was applied.
INSERT INTO schema_migrations (version) VALUES ($1)
