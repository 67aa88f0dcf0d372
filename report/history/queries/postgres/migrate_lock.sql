-- Serialises concurrent Migrate calls on one database: the lock is held
-- until the migration transaction ends. $1 is a fixed key for clickrecon.
SELECT pg_advisory_xact_lock($1)
