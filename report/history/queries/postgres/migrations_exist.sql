-- Whether schema_migrations exists on the search path: Open tells a history
-- database that was never migrated from one that is out of date.
SELECT to_regclass('schema_migrations') IS NOT NULL
