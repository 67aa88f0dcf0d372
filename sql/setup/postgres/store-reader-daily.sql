-- The role clickrecon counts a daily store as (STORE_DSN, STORE_PRESET
-- daily, table click_counts), on PostgreSQL: it may read the counter table
-- and change nothing. store-reader-events.sql is the same for an events
-- store;
-- the MySQL and MariaDB files of sql/setup/mysql create the same roles. clickrecon already runs
-- every store query in a read-only transaction that it rolls back; this
-- role makes the same promise in the database, whatever a custom query
-- (STORE_QUERY_FILE) says.
--
-- Run it once, as the table's owner or a superuser, in the store's
-- database, then give the role a password and put it in STORE_DSN:
--
--   psql "postgres://admin@db.internal:5432/clicks" -f store-reader-daily.sql
--   psql "postgres://admin@db.internal:5432/clicks" -c '\password clickrecon_reader'
--   STORE_DSN=postgres://clickrecon_reader:PASSWORD@db.internal:5432/clicks?sslmode=require
--
-- Rename the role, or the schema (public), to suit; every name appears in
-- full below. Nothing here needs to change when clickrecon is upgraded.
-- Any role may connect to a database unless CONNECT was revoked from
-- PUBLIC: then add GRANT CONNECT ON DATABASE clicks TO clickrecon_reader.

CREATE ROLE clickrecon_reader LOGIN;

-- Every session of the role is read-only, not only clickrecon's
-- transactions. The run lock (pg_try_advisory_lock) and the store's
-- identity (pg_control_system(), granted to PUBLIC by PostgreSQL) work
-- under it.
ALTER ROLE clickrecon_reader SET default_transaction_read_only = on;

GRANT USAGE ON SCHEMA public TO clickrecon_reader;

-- The daily preset reads the table click_counts (sql/store/postgres/daily.sql).
-- For a custom query (STORE_QUERY_FILE), grant SELECT on the tables it
-- reads instead.
GRANT SELECT ON click_counts TO clickrecon_reader;
