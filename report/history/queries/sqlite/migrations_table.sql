-- Creates the table that records which migrations of sql/history have been
-- applied, before they are read. Runs inside Migrate's transaction, which
-- holds SQLite's write lock from its first statement.
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT
