-- The versions of sql/history already applied, such as 001_history.
SELECT version FROM schema_migrations ORDER BY version
