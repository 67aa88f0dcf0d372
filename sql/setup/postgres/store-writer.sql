-- The role `clickrecon repair --apply` and `run --repair --apply` insert lost
-- clicks as (STORE_WRITE_DSN), on PostgreSQL. STORE_DSN stays the
-- read-only role of store-reader-events.sql; only a repair uses this one.
-- A repair writes into an events store only (table clicks): a daily store
-- has no writer. sql/setup/mysql/store-writer.sql is the same role on MySQL.
--
-- Run it once, as the table's owner or a superuser, in the store's
-- database, then give the role a password and put it in STORE_WRITE_DSN
-- (a Secret apart from STORE_DSN's):
--
--   psql "postgres://admin@db.internal:5432/clicks" -f store-writer.sql
--   psql "postgres://admin@db.internal:5432/clicks" -c '\password clickrecon_writer'
--   STORE_WRITE_DSN=postgres://clickrecon_writer:PASSWORD@db.internal:5432/clicks?sslmode=require
--
-- Rename the role, or the schema (public), to suit.

CREATE ROLE clickrecon_writer LOGIN;

GRANT USAGE ON SCHEMA public TO clickrecon_writer;

-- SELECT: each day's transaction re-counts the hours it repairs before it
-- inserts, and the whole day after. INSERT: the lost clicks. A repair never
-- updates or deletes a row.
GRANT SELECT, INSERT ON clicks TO clickrecon_writer;

-- A repair locks the table against other writers while it re-counts and
-- inserts an hour (LOCK TABLE clicks IN SHARE MODE, released at the
-- day's commit), so that no click can arrive between the count and the
-- insert and be written twice. PostgreSQL lets a role take that lock only
-- when it holds UPDATE, DELETE or TRUNCATE on the table (or MAINTAIN, from
-- PostgreSQL 17). UPDATE is the narrowest of the three that every version
-- has: clickrecon never runs an UPDATE. On PostgreSQL 17 or later you may
-- grant MAINTAIN instead of UPDATE.
GRANT UPDATE ON clicks TO clickrecon_writer;

-- With a clicks table of your own and REPAIR_INSERT_FILE, grant INSERT on
-- the columns your insert names, and USAGE on a sequence it draws an id
-- from (GRANT USAGE ON SEQUENCE clicks_id_seq TO clickrecon_writer).
