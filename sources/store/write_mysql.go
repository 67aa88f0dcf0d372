package store

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// Repair on MySQL and MariaDB
//
// A mysql:// STORE_WRITE_DSN is an ordinary read-write session: it is
// not made read-only as STORE_DSN's are. Its time_zone is +00:00, as the
// reader's, so :ts is written as the UTC wall clock into a DATETIME ts and
// as the same instant into a TIMESTAMP one; its sql_mode adds
// STRICT_ALL_TABLES, so a value the column cannot hold (a link id too
// long, a country that is not text) is an error, never truncated; and its
// innodb_lock_wait_timeout is the lock wait. A day's transaction runs at
// REPEATABLE READ and re-counts each hour with a locking read (LOCK IN
// SHARE MODE): InnoDB then holds next-key locks on the hour's range of the
// ts index until the commit, so a receiver's insert into the hour waits
// for the repair, and a receiver's insert not yet committed is waited for
// and counted. Nothing is locked but the hours the plan compared.

var (
	//go:embed queries/insert_click_mysql.sql
	insertClickMySQL string
	//go:embed queries/span_locked_mysql.sql
	spanLockedMySQL string
	//go:embed queries/hour_clicks_mysql.sql
	hourClicksMySQL string
)

// mysqlWriteMode is the sql_mode of a writer's session: the server's (or
// the user's) mode with STRICT_ALL_TABLES added, so an insert that does not
// fit is refused rather than stored altered.
const mysqlWriteMode = "CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'STRICT_ALL_TABLES')"

// pinMySQLWriter sets, on top of pinMySQL, what every writing connection
// runs with: the strict sql_mode and the lock wait, in whole seconds
// (innodb_lock_wait_timeout), at least one.
func pinMySQLWriter(t dsn.Target, lockWait time.Duration) dsn.Target {
	c := t.MySQLConfig.Clone()
	secs := max(int64((lockWait+time.Second-1)/time.Second), 1)
	c.Params["innodb_lock_wait_timeout"] = strconv.FormatInt(secs, 10)
	c.Params["sql_mode"] = mysqlWriteMode
	t.MySQLConfig = c
	return t
}

// mysqlRepeatableRead is the isolation of a MySQL day transaction: the
// level at which a locking read takes gap locks, whatever the server's
// default (READ COMMITTED takes none, and a receiver could insert into an
// hour after it was counted).
var mysqlRepeatableRead = &sql.TxOptions{Isolation: sql.LevelRepeatableRead}

// checkMySQLGrants checks, before anything is written, that the role may
// take the repair's locking read on table clicks (SELECT; before MySQL
// 8.0.22 also one of UPDATE, DELETE or LOCK TABLES) and, for the events schema's
// own insert, that it may insert into it (EXPLAIN INSERT needs the INSERT
// privilege and writes nothing, fires no trigger).
func (w *Writer) checkMySQLGrants(ctx context.Context, insert bool) error {
	tx, err := w.db.BeginTxx(ctx, mysqlRepeatableRead)
	if err != nil {
		return fmt.Errorf("begin the grants check: %w", classifyWrite(err))
	}
	defer tx.Rollback()
	at := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // an empty range: nothing is locked
	if _, err := w.count(ctx, tx, at, at); err != nil {
		return mysqlGrantError(err, errNoMySQLLockGrant)
	}
	if !insert {
		return nil
	}
	text, args, err := w.insert.bind(w.dialect, w.values(Click{TS: at, LinkID: "grants check"}))
	if err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, "EXPLAIN "+text, args...) // a plan's rows: read, not executed
	if err != nil {
		return mysqlGrantError(classifyWrite(err), errNoMySQLInsertGrant)
	}
	return rows.Close()
}

// mysqlGrantError is err, or grant when err is the server refusing a
// privilege.
func mysqlGrantError(err, grant error) error {
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) && mysqlDenied(myErr) {
		return configError{fmt.Errorf("%w: %w", grant, myErr)}
	}
	return err
}

var (
	errNoMySQLLockGrant = errors.New("STORE_WRITE_DSN's role may not read table " + lockedTable + " with a locking read (SELECT … LOCK IN SHARE MODE keeps other writers out of an hour while it is re-counted and written): " +
		"GRANT SELECT ON " + lockedTable + " TO the role and, before MySQL 8.0.22, GRANT LOCK TABLES ON the database (repair only ever inserts)")
	errNoMySQLInsertGrant = errors.New("STORE_WRITE_DSN's role may not insert into table " + lockedTable + ": GRANT INSERT ON " + lockedTable + " TO the role")
)

// mysqlDenied reports whether e is the server refusing a privilege:
// a table (1142), a column (1143), a database (1044) or a global one (1227).
func mysqlDenied(e *mysql.MySQLError) bool {
	switch e.Number {
	case 1044, 1142, 1143, 1227:
		return true
	}
	return false
}

// mysqlBusy reports whether err is InnoDB giving up on a lock another
// transaction holds: a lock wait timeout (1205), which rolls back the
// statement, or a deadlock (1213), which rolls back the transaction.
func mysqlBusy(err error) bool {
	var myErr *mysql.MySQLError
	return errors.As(err, &myErr) && (myErr.Number == 1205 || myErr.Number == 1213)
}

// mysqlRejects reports whether err is MySQL refusing a click's value
// rather than the statement or the session: a data exception (class 22),
// an integrity constraint (class 23: NULL, duplicate key, foreign key),
// an incorrect string or date value (1366, 1292), a column without a
// default (1364) or a failed CHECK (MySQL 3819, MariaDB 4025).
func mysqlRejects(err error) bool {
	var myErr *mysql.MySQLError
	if !errors.As(err, &myErr) {
		return false
	}
	switch class := string(myErr.SQLState[:2]); {
	case class == "22", class == "23":
		return true
	}
	switch myErr.Number {
	case 1292, 1364, 1366, 3819, 4025:
		return true
	}
	return false
}

// classifyMySQLWrite is classifyWrite for MySQL.
func classifyMySQLWrite(err error) (error, bool) {
	var myErr *mysql.MySQLError
	if !errors.As(err, &myErr) {
		return err, false
	}
	switch {
	case mysqlDenied(myErr):
		return configError{fmt.Errorf("STORE_WRITE_DSN's role lacks a permission repair needs (GRANT SELECT, INSERT ON %s TO it, and before MySQL 8.0.22 LOCK TABLES on the database): %w", lockedTable, err)}, true
	case string(myErr.SQLState[:2]) == "42":
		return configError{fmt.Errorf("the insert does not fit the store STORE_WRITE_DSN names (check REPAIR_INSERT_FILE, or that the store has the events schema): %w", err)}, true
	}
	return err, true
}

// mysqlTimeLayout is how the driver writes a DATETIME or TIMESTAMP it
// does not parse: the session's wall clock, +00:00 here.
const mysqlTimeLayout = "2006-01-02 15:04:05.999999"

func parseMySQLTime(text string) (time.Time, error) {
	t, err := time.ParseInLocation(mysqlTimeLayout, text, time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("a click's ts %q cannot be read: %w", text, err)
	}
	return t, nil
}
