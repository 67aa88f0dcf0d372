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
-- Repair cannot write into a MySQL store (STORE_WRITE_DSN must be
-- PostgreSQL or SQLite): grant no INSERT to clickrecon.
