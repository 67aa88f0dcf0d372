-- Roles for clickrecon on a MySQL or MariaDB click store. Replace the
-- database name (clicks), the host part ('%') and the passwords. Run it
-- after events.sql or daily.sql: a table's GRANT needs the table (keep the
-- line of the table you use).
--
-- Reading (STORE_DSN): SELECT on the tables the count query reads, nothing
-- else. clickrecon makes every session read-only (SET SESSION TRANSACTION
-- READ ONLY) and runs every statement in a START TRANSACTION READ ONLY
-- that it rolls back, but the role is what guarantees it cannot write.
-- Store identity reads @@server_uuid (MySQL) or @@hostname, @@port and
-- @@server_id (MariaDB), which need no privilege.
CREATE USER IF NOT EXISTS 'clickrecon_read'@'%' IDENTIFIED BY 'change-me';
GRANT SELECT ON clicks.clicks TO 'clickrecon_read'@'%';
GRANT SELECT ON clicks.click_counts TO 'clickrecon_read'@'%';
-- Require TLS for the role when the server offers it, and then add
-- ?tls=true to STORE_DSN:
-- ALTER USER 'clickrecon_read'@'%' REQUIRE SSL;

-- The run lock: with no HISTORY_DSN, a run takes a named lock on the store
-- (GET_LOCK), which needs no privilege either.
--
-- Repairing (STORE_WRITE_DSN, repair --apply): a role of its own that may
-- read and insert into clicks, nothing else: repair never updates or
-- deletes. Each day's transaction re-counts every hour it writes with a
-- locking read (SELECT ... LOCK IN SHARE MODE), which needs SELECT on
-- MariaDB and on MySQL from 8.0.22; MySQL before 8.0.22 also wants one of
-- UPDATE, DELETE or LOCK TABLES, and LOCK TABLES (on the database: it has
-- no table-level form) is the one that lets the role change no row. The
-- writer checks both grants when it opens (the locking read on an empty
-- range, and EXPLAIN of its insert, which writes nothing). A custom insert
-- (REPAIR_INSERT_FILE) needs INSERT on the tables it names.
CREATE USER IF NOT EXISTS 'clickrecon_repair'@'%' IDENTIFIED BY 'change-me-too';
GRANT SELECT, INSERT ON clicks.clicks TO 'clickrecon_repair'@'%';
-- Only before MySQL 8.0.22:
-- GRANT LOCK TABLES ON clicks.* TO 'clickrecon_repair'@'%';
