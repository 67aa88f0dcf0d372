-- Whether schema_migrations exists: Open tells a history database that was
-- never migrated from one that is out of date.
SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'
