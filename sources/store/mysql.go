package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// MySQL and MariaDB
//
// A mysql:// STORE_DSN (internal/dsn) is read through
// github.com/go-sql-driver/mysql. Every connection runs
// SET SESSION TRANSACTION READ ONLY when it opens (a DDL statement commits
// the transaction it is in and would escape a START TRANSACTION READ ONLY
// alone), and SET time_zone = '+00:00', so a TIMESTAMP column is read and
// compared as an instant whatever the server's, the user's or a writer's
// time_zone; the server needs no time-zone tables, as the day's bounds are
// computed in Go. :from and :to are sent as wall-clock DATETIME(6) text in
// UTC, or in STORE_TIMESTAMP_TZ for a DATETIME column that holds local
// times. Every statement is prepared on the server, so it is parsed as
// exactly one statement (the DSN cannot turn on multiStatements), and runs
// inside START TRANSACTION READ ONLY, always rolled back.

var (
	//go:embed queries/events_mysql.sql
	eventsMySQL string
	//go:embed queries/daily_mysql.sql
	dailyMySQL string
	//go:embed queries/span_mysql.sql
	spanMySQL string
	//go:embed queries/countries_mysql.sql
	countriesMySQL string
	//go:embed queries/total_daily_mysql.sql
	totalDailyMySQL string
	//go:embed queries/total_daily_chunk_mysql.sql
	totalDailyChunkMySQL string
	//go:embed queries/unreadable_mysql.sql
	unreadableMySQL string
)

// mysqlSessionZone is every MySQL session's time_zone: an offset, which
// needs no time-zone tables, and UTC, so that a TIMESTAMP is read as the
// instant it stores.
const mysqlSessionZone = "'+00:00'"

// pinMySQL sets what every MySQL connection of the store runs with: the
// session time_zone (mysqlSessionZone), and zone, the one in which :from and
// :to are written for comparison with a DATETIME column (the driver writes
// a time.Time in its Loc).
func pinMySQL(t dsn.Target, zone *time.Location) dsn.Target {
	c := t.MySQLConfig.Clone()
	c.Params = map[string]string{"time_zone": mysqlSessionZone}
	c.Loc = zone
	t.MySQLConfig = c
	return t
}

// mysqlCheckSQL is the read that makes Open fail on bad credentials or a
// missing database.
const mysqlCheckSQL = "SELECT count(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = DATABASE()"

// classifyMySQL marks MySQL's errors that say the query itself is wrong
// with ErrBadQuery, as classify does PostgreSQL's, by SQLSTATE: class 42
// (a syntax error, an unknown table or column, a privilege the role lacks),
// class 22 (a data exception), and 25006 (a write in a read-only
// transaction, MariaDB's and MySQL's error 1792). Error 1290 (the server
// runs with --read-only) and 1836 (the server is a read-only replica) are
// writes refused too.
func classifyMySQL(err error) (error, bool) {
	var myErr *mysql.MySQLError
	if !errors.As(err, &myErr) {
		return err, false
	}
	state := string(myErr.SQLState[:])
	switch {
	case state[:2] == "42", state[:2] == "22", state == "25006",
		myErr.Number == 1792, myErr.Number == 1290, myErr.Number == 1836:
		return fmt.Errorf("%w: %w", ErrBadQuery, err), true
	}
	return err, true
}

// mysqlIdentity is what a MySQL or MariaDB store is, read from the server:
//
//	mysql:server_uuid=UUID;db=NAME                       MySQL (@@server_uuid)
//	mariadb:host=HOSTNAME:PORT;server_id=ID;db=NAME      MariaDB, which has no server_uuid
//
// MySQL keeps server_uuid in its data directory (auto.cnf), so it names
// the server however it is reached, and survives restarts and upgrades.
// MariaDB has nothing like it that lasts (its @@server_uid changes with the
// machine's network card), so it is named by its own host name and port
// and its replication server_id: the same whatever address or spelling the
// DSN uses; renaming the server's host, moving its port or changing its
// server_id gives it a new identity, and one repeat of an alert.
func (s *Store) mysqlIdentity(ctx context.Context) (string, error) {
	var db string
	if err := s.db.GetContext(ctx, &db, "SELECT DATABASE()"); err != nil {
		return "", fmt.Errorf("identify store: read the database's name: %w", err)
	}
	var uuid string
	err := s.db.GetContext(ctx, &uuid, "SELECT @@server_uuid")
	var myErr *mysql.MySQLError
	switch {
	case err == nil && uuid != "":
		return "mysql:server_uuid=" + uuid + ";db=" + db, nil
	case err != nil && !(errors.As(err, &myErr) && myErr.Number == 1193): // unknown system variable
		return "", fmt.Errorf("identify store: read the server's uuid: %w", err)
	}
	var host, port, id string
	if err := s.db.QueryRowContext(ctx, "SELECT @@hostname, CAST(@@port AS CHAR), CAST(@@server_id AS CHAR)").Scan(&host, &port, &id); err != nil {
		return "", fmt.Errorf("identify store: read the server's host name: %w", err)
	}
	return "mariadb:host=" + host + ":" + port + ";server_id=" + id + ";db=" + db, nil
}

// openMySQL returns a pool on t whose every connection is read-only for the
// whole session (readOnlyConnector).
func openMySQL(t dsn.Target) (*sqlx.DB, error) {
	c, err := mysql.NewConnector(t.MySQLConfig)
	if err != nil {
		return nil, err
	}
	var conn driver.Connector = readOnlyConnector{c}
	if t.Wrap != nil {
		conn = t.Wrap(conn)
	}
	return sqlx.NewDb(sql.OpenDB(conn), "mysql"), nil
}

// readOnlyConnector makes each new MySQL connection read-only for its
// whole session before the pool hands it out: on MySQL and MariaDB a DDL
// statement (DROP TABLE, CREATE TABLE) first commits the transaction it
// runs in, so START TRANSACTION READ ONLY alone would not stop it; the
// session's access mode does (error 1792).
type readOnlyConnector struct{ driver.Connector }

func (c readOnlyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("the MySQL driver cannot run a statement on a new connection")
	}
	if _, err := ex.ExecContext(ctx, "SET SESSION TRANSACTION READ ONLY", nil); err != nil {
		conn.Close()
		return nil, fmt.Errorf("make the session read-only: %w", err)
	}
	return conn, nil
}

// checkWallZone refuses STORE_TIMESTAMP_TZ on a MySQL events table whose ts
// is a TIMESTAMP: such a column holds instants, which the session (pinned
// to +00:00) compares with :from and :to as UTC, so bounds written in
// another zone would shift every day by its offset. The error is
// ErrRefused: the configuration must change.
func (s *Store) checkWallZone(ctx context.Context) error {
	if s.dialect != dsn.MySQL || s.wallZone == nil {
		return nil
	}
	var typ string
	err := s.db.GetContext(ctx, &typ, "SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'clicks' AND COLUMN_NAME = 'ts'")
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil // the count query reports the missing table itself
	case err != nil:
		return fmt.Errorf("check the type of clicks.ts: %w", err)
	case typ == "timestamp":
		return configError{fmt.Errorf("STORE_TIMESTAMP_TZ=%s applies to a DATETIME ts holding local times; clicks.ts is a TIMESTAMP, which holds instants: leave STORE_TIMESTAMP_TZ unset", s.wallZone)}
	}
	return nil
}
