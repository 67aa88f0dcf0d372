-- Creates the table that records which migrations of sql/history have been
-- applied, before they are read. Runs inside Migrate's transaction, after
-- its advisory lock, so concurrent runs cannot race on it.
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    text        PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)
