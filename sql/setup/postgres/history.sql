-- The run history (HISTORY_DSN) on PostgreSQL: a role that owns a schema
-- of its own. `clickrecon migrate` (the init container of the CronJob and
-- the backfill Job) creates and upgrades the tables in it, and every run
-- reads and writes them, with the same role and the same DSN. The history
-- holds runs, Slack alerts, the outbox of posts and notices: nothing of
-- the click store.
--
-- Run it once, as a superuser or a role with CREATEROLE, in the database
-- that holds the history: a database of its own (createdb clickrecon) or
-- an existing one (the schema keeps the tables apart). Then give the role
-- a password and put it in HISTORY_DSN:
--
--   psql "postgres://admin@db.internal:5432/clickrecon" -f history.sql
--   psql "postgres://admin@db.internal:5432/clickrecon" -c '\password clickrecon_history'
--   HISTORY_DSN=postgres://clickrecon_history:PASSWORD@db.internal:5432/clickrecon?sslmode=require
--   clickrecon migrate
--
-- Rename the role and the schema to suit (they share a name so that the
-- default search_path, "$user", public, finds the schema first).

CREATE ROLE clickrecon_history LOGIN;

-- The owner of a schema may create tables in it and do anything with
-- them: migrate creates and alters them, a run inserts and updates rows.
-- Neither needs more, and no grant reaches another schema's tables.
CREATE SCHEMA clickrecon_history AUTHORIZATION clickrecon_history;

-- Whatever the server's default search_path, the role's tables are found
-- in its schema.
ALTER ROLE clickrecon_history SET search_path = clickrecon_history;
