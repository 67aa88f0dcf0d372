-- The role clickrecon counts the click store as (STORE_DSN), on PostgreSQL:
-- it may read the click table and change nothing. clickrecon already runs
-- every store query in a read-only transaction that it rolls back; this
-- role makes the same promise in the database, whatever a custom query
-- (STORE_QUERY_FILE) says.
--
-- Run it once, as the table's owner or a superuser, in the store's
-- database, then give the role a password and put it in STORE_DSN:
--
--   psql "postgres://admin@db.internal:5432/clicks" -f store-reader.sql
--   psql "postgres://admin@db.internal:5432/clicks" -c '\password clickrecon_ro'
--   STORE_DSN=postgres://clickrecon_ro:PASSWORD@db.internal:5432/clicks?sslmode=require
--
-- Rename the role, or the schema (public), to suit; every name appears in
-- full below. Nothing here needs to change when clickrecon is upgraded.
-- Any role may connect to a database unless CONNECT was revoked from
-- PUBLIC: then add GRANT CONNECT ON DATABASE clicks TO clickrecon_ro.

CREATE ROLE clickrecon_ro LOGIN;

-- Every session of the role is read-only, not only clickrecon's
-- transactions. The run lock (pg_try_advisory_lock) and the store's
-- identity (pg_control_system(), granted to PUBLIC by PostgreSQL) work
-- under it.
ALTER ROLE clickrecon_ro SET default_transaction_read_only = on;

GRANT USAGE ON SCHEMA public TO clickrecon_ro;

-- The events preset reads the table clicks (sql/store/postgres/events.sql).
-- For the daily preset grant click_counts instead; for a custom query,
-- SELECT on the tables it reads.
GRANT SELECT ON clicks TO clickrecon_ro;
