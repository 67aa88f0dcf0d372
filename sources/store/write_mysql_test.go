package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/mysqltest"
)

// waitForMySQL returns once query, run on db's database with arg, counts
// a row: an event, not a guessed time. It fails t if none comes before
// done is closed or 5 s pass.
func waitForMySQL(t *testing.T, db *sqlx.DB, query, arg string, done <-chan struct{}) bool {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		var n int
		if err := db.Get(&n, query, arg); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return true
		}
		select {
		case <-done:
			return false
		case <-deadline:
			t.Fatalf("no statement like %q waited within 5s", arg)
		case <-time.After(150 * time.Millisecond):
			// InnoDB refreshes what INNODB_TRX shows only when it was last
			// read more than 100ms ago: a faster poll would see it frozen.
		}
	}
}

// waitForLockingRead returns once a session on db's database runs the
// repair's locking re-count. MariaDB does not list a transaction that has
// only read in INNODB_TRX, so the statement is found in PROCESSLIST: it
// runs until the lock it waits for is released, and a test that then
// commits the receiver sees, in the count it returns, whether it waited.
func waitForLockingRead(t *testing.T, db *sqlx.DB, done <-chan struct{}) bool {
	t.Helper()
	return waitForMySQL(t, db, `SELECT count(*) FROM information_schema.PROCESSLIST
		WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND COMMAND <> 'Sleep' AND INFO LIKE ?`, "%LOCK IN SHARE MODE%", done)
}

// waitForInsertLockWait returns once an insert whose text holds marker
// waits for a lock (INNODB_TRX, LOCK WAIT).
func waitForInsertLockWait(t *testing.T, db *sqlx.DB, marker string, done <-chan struct{}) bool {
	t.Helper()
	return waitForMySQL(t, db, `SELECT count(*) FROM information_schema.INNODB_TRX
		WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE ?`, "%"+marker+"%", done)
}

// insertMySQL is a receiver's insert of one click.
const insertMySQL = "INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, ?)"

func openMySQLWriter(t *testing.T, dsn string, o Options) *Writer {
	t.Helper()
	w, err := OpenWriter(t.Context(), storeWriteDSN(t, dsn), "", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func countMySQL(t *testing.T, db *sqlx.DB) int {
	t.Helper()
	var n int
	if err := db.Get(&n, "SELECT count(*) FROM clicks"); err != nil {
		t.Fatal(err)
	}
	return n
}

// A receiver whose insert is under way (its READ COMMITTED transaction
// open, the click inserted) when the day's locking re-count reads the hour
// is waited for, then counted: the day is refused with ErrChanged and the
// click is in the store once.
func TestMySQLWriterWaitsForAnOpenReceiverThenCountsIt(t *testing.T) {
	db, dsn := newMySQL(t)
	w := openMySQLWriter(t, dsn, Options{})
	lost := Click{repairHour.Add(time.Minute), "lnk_a", "PL"}
	receiver, err := db.BeginTxx(t.Context(), &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Rollback()
	if _, err := receiver.Exec(insertMySQL, lost.TS, lost.LinkID, lost.CountryCode); err != nil {
		t.Fatal(err)
	}
	type result struct {
		w   Written
		err error
	}
	done := make(chan result, 1)
	finished := make(chan struct{})
	go func() {
		hour := []HourCheck{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: 0}}
		got, err := w.Insert(context.Background(), hour, []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{lost}}}, nil)
		done <- result{got, err}
		close(finished)
	}()
	waited := waitForLockingRead(t, db, finished)
	if err := receiver.Commit(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !waited {
		t.Errorf("the day's transaction did not wait for the receiver's open insert")
	}
	if !errors.Is(r.err, ErrChanged) || r.w.Inserted != 0 {
		t.Errorf("Insert = %+v, %v; want the day refused with ErrChanged", r.w, r.err)
	}
	if n := countMySQL(t, db); n != 1 {
		t.Errorf("the store holds the click %d times, want once", n)
	}
}

// A receiver (READ COMMITTED, autocommit) that inserts into an hour after
// the day's locking re-count read it waits for the repair's commit, then
// lands: both clicks are in the store once each, and a rerun planned on
// the old count inserts nothing.
func TestMySQLReceiverAfterTheLockingReadWaitsForTheCommit(t *testing.T) {
	db, dsn := newMySQL(t)
	w := openMySQLWriter(t, dsn, Options{})
	receiver, err := db.Connx(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Close()
	if _, err := receiver.ExecContext(t.Context(), "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("receiver_%08x", rand.Uint32())
	received := make(chan error, 1)
	landed := make(chan struct{})
	var waited, landedEarly bool
	checks := []HourCheck{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: 0}}
	hours := []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{{repairHour.Add(time.Minute), "lnk_lost", "PL"}}}}
	got, err := w.Insert(t.Context(), checks, hours, func(int) {
		go func() {
			_, err := receiver.ExecContext(context.Background(), "/* "+marker+" */ "+insertMySQL, repairHour.Add(30*time.Minute), "lnk_live", "DE")
			received <- err
			close(landed)
		}()
		waited = waitForInsertLockWait(t, db, marker, landed)
		select {
		case <-received:
			landedEarly = true
		default:
		}
	})
	if err != nil || got.Inserted != 1 {
		t.Fatalf("Insert = %+v, %v", got, err)
	}
	if !waited || landedEarly {
		t.Errorf("receiver waited: %v, landed before the commit: %v; want it to wait for the commit", waited, landedEarly)
	}
	if err := <-received; err != nil {
		t.Fatalf("the receiver's insert after the commit: %v", err)
	}
	if n := countMySQL(t, db); n != 2 {
		t.Errorf("the store holds %d clicks, want 2 (the repaired one and the receiver's)", n)
	}
	again, err := w.Insert(t.Context(), checks, hours, nil)
	if !errors.Is(err, ErrChanged) || again.Inserted != 0 {
		t.Errorf("rerun on the old plan = %+v, %v; want ErrChanged, nothing inserted", again, err)
	}
	if n := countMySQL(t, db); n != 2 {
		t.Errorf("after the rerun the store holds %d clicks, want 2", n)
	}
}

// A receiver that keeps an hour's rows longer than the lock wait
// (innodb_lock_wait_timeout) makes the day refused with ErrBusy, bounded,
// with nothing written: never a hang.
func TestMySQLWriterBusyHourRefusesTheDay(t *testing.T) {
	db, dsn := newMySQL(t)
	w := openMySQLWriter(t, dsn, Options{LockWait: time.Second})
	receiver, err := db.BeginTxx(t.Context(), &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Rollback()
	if _, err := receiver.Exec(insertMySQL, repairHour.Add(10*time.Minute), "lnk_busy", nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	hour := []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{{repairHour, "lnk_a", "PL"}}}}
	got, err := w.Insert(t.Context(), []HourCheck{{From: repairHour, To: repairHour.Add(time.Hour)}}, hour, nil)
	if !errors.Is(err, ErrBusy) || got.Inserted != 0 || !strings.Contains(err.Error(), "run repair again") {
		t.Fatalf("Insert = %+v, %v; want ErrBusy", got, err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Insert took %s with a lock wait of 1s", d)
	}
	receiver.Rollback()
	if n := countMySQL(t, db); n != 0 {
		t.Errorf("the store holds %d clicks, want none", n)
	}
}

// A click the store cannot hold (a link id longer than its VARCHAR(255),
// which the writer's strict session refuses rather than truncates)
// refuses its hour alone: the day's other hours are written.
func TestMySQLWriterRejectedClickRefusesItsHourOnly(t *testing.T) {
	db, dsn := newMySQL(t)
	w := openMySQLWriter(t, dsn, Options{})
	h2 := repairHour.Add(time.Hour)
	hours := []HourWrite{
		{From: repairHour, To: h2, Clicks: []Click{{repairHour, "lnk_ok", "PL"}, {repairHour.Add(time.Second), strings.Repeat("x", 300), "PL"}}},
		{From: h2, To: h2.Add(time.Hour), Clicks: []Click{{h2, "lnk_b", ""}, {h2.Add(time.Second), "lnk_c", "DE"}}},
	}
	got, err := w.Insert(t.Context(), nil, hours, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Inserted != 2 || got.Refused[0] == nil || got.Refused[1] != nil || !strings.Contains(got.Refused[0].Error(), "2026-10-24T02:00:01.000Z") {
		t.Errorf("Insert = %+v; want the first hour refused for its click at 02:00:01, the second written", got)
	}
	var links []string
	if err := db.Select(&links, "SELECT link_id FROM clicks ORDER BY link_id"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(links, ",") != "lnk_b,lnk_c" {
		t.Errorf("the store holds %v, want the second hour's clicks only", links)
	}
}

// A hostile link id (a quote, a backslash, a NUL byte, an emoji) goes in
// as it is, through a prepared statement, and is read back the same.
func TestMySQLWriterKeepsHostileValues(t *testing.T) {
	_, dsn := newMySQL(t)
	w := openMySQLWriter(t, dsn, Options{})
	hostile := Click{repairHour.Add(1500 * time.Millisecond), "x'); DROP TABLE clicks; -- \\ \x00 😀", ""}
	if got, err := w.Insert(t.Context(), nil, []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{hostile}}}, nil); err != nil || got.Inserted != 1 {
		t.Fatalf("Insert = %+v, %v", got, err)
	}
	got, err := openStore(t, dsn).Clicks(t.Context(), mustQuery(t)(PresetQuery(PresetEvents)), repairHour, repairHour.Add(time.Hour))
	if err != nil || len(got) != 1 || got[0] != hostile {
		t.Errorf("Clicks = %q, %v; want %q", got, err, hostile)
	}
}

// writeUser creates a user for t with grants on the test database's clicks
// table and returns its DSN.
func writeUser(t *testing.T, db *sqlx.DB, dsn string, grants ...string) string {
	t.Helper()
	name := fmt.Sprintf("crw_%08x", rand.Uint32())
	var database string
	if err := db.Get(&database, "SELECT DATABASE()"); err != nil {
		t.Fatal(err)
	}
	admin := mysqltest.Admin(t)
	stmts := []string{"CREATE USER '" + name + "'@'%' IDENTIFIED BY 'pw_user_secret_77'"}
	for _, g := range grants {
		stmts = append(stmts, strings.ReplaceAll(g, "DB", "`"+database+"`")+" TO '"+name+"'@'%'")
	}
	for _, stmt := range stmts {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP USER '" + name + "'@'%'"); err != nil {
			t.Errorf("drop user %s: %v", name, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(name, "pw_user_secret_77")
	return u.String()
}

// A STORE_WRITE_DSN user that may not read clicks with a locking read, or
// insert into it, is refused when the writer opens, before anything is
// planned or written, with an error that names STORE_WRITE_DSN and the
// grant to give, and never the password.
func TestMySQLWriterUserWithoutTheGrantsIsRefused(t *testing.T) {
	db, dsn := newMySQL(t)
	for _, tt := range []struct {
		name   string
		grants []string
		want   string
	}{
		{"no_select", []string{"GRANT INSERT ON DB.clicks"}, "GRANT SELECT ON clicks"},
		{"no_insert", []string{"GRANT SELECT ON DB.clicks"}, "GRANT INSERT ON clicks"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, err := OpenWriter(t.Context(), storeWriteDSN(t, writeUser(t, db, dsn, tt.grants...)), "", Options{})
			if err == nil {
				w.Close()
				t.Fatal("opened, want refused")
			}
			msg := err.Error()
			if !strings.Contains(msg, "STORE_WRITE_DSN") || !strings.Contains(msg, tt.want) || !errors.Is(err, ErrRefused) {
				t.Errorf("err = %v; want a configuration error naming STORE_WRITE_DSN and %q", err, tt.want)
			}
			if strings.Contains(msg, "pw_user_secret_77") {
				t.Errorf("err = %v; want no password", err)
			}
		})
	}
	t.Run("grants_sql", func(t *testing.T) { // sql/store/mysql/grants.sql's, on MariaDB
		w := openMySQLWriter(t, writeUser(t, db, dsn, "GRANT SELECT, INSERT ON DB.clicks"), Options{})
		got, err := w.Insert(t.Context(), []HourCheck{{From: repairHour, To: repairHour.Add(time.Hour)}}, []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{{repairHour, "lnk_a", "PL"}}}}, nil)
		if err != nil || got.Inserted != 1 {
			t.Errorf("Insert = %+v, %v", got, err)
		}
	})
}

// CheckTarget accepts the MySQL store STORE_DSN reads, however
// STORE_WRITE_DSN spells it, and refuses another database of the same
// server.
func TestMySQLCheckTarget(t *testing.T) {
	_, dsn := newMySQL(t)
	s := openStore(t, dsn)
	same := strings.Replace(strings.Replace(dsn, "mysql://", "mariadb://", 1), "127.0.0.1", "localhost", 1)
	if err := openMySQLWriter(t, same, Options{}).CheckTarget(t.Context(), s); err != nil {
		t.Errorf("the same store spelled otherwise: %v", err)
	}
	_, other := newMySQL(t)
	err := openMySQLWriter(t, other, Options{}).CheckTarget(t.Context(), s)
	if !errors.Is(err, ErrOtherStore) || !errors.Is(err, ErrRefused) || !strings.Contains(fmt.Sprint(err), "STORE_WRITE_DSN") {
		t.Errorf("CheckTarget = %v; want ErrOtherStore naming STORE_WRITE_DSN", err)
	}
}
