package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/mysqltest"
)

// waitForMySQL is waitForCount on MySQL, polled every 150ms: InnoDB
// refreshes what INNODB_TRX shows only when it was last read more than
// 100ms ago, and a faster poll would see it frozen.
func waitForMySQL(t *testing.T, db *sqlx.DB, query, arg string, done <-chan struct{}) bool {
	t.Helper()
	return waitForCount(t, db, 150*time.Millisecond, done, query, arg)
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

// A receiver (READ COMMITTED, autocommit) that inserts into an hour after
// the day's locking re-count read it waits for the repair's commit, then
// lands: both clicks are in the store once each, and a rerun planned on
// the old count inserts nothing.
func TestMySQLReceiverAfterTheLockingReadWaitsForTheCommit(t *testing.T) {
	db, dsn := newMySQL(t)
	w := openWriter(t, dsn, Options{})
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
	hours := []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{{repairHour.Add(time.Minute), "lnk_lost", "PL", "", false}}}}
	got, err := w.Insert(t.Context(), checks, hours, func(int) {
		go func() {
			_, err := receiver.ExecContext(context.Background(), "/* "+marker+" */ "+insertClick, repairHour.Add(30*time.Minute), "lnk_live", "DE")
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
	if n := countClicks(t, db); n != 2 {
		t.Errorf("the store holds %d clicks, want 2 (the repaired one and the receiver's)", n)
	}
	again, err := w.Insert(t.Context(), checks, hours, nil)
	if !errors.Is(err, ErrChanged) || again.Inserted != 0 {
		t.Errorf("rerun on the old plan = %+v, %v; want ErrChanged, nothing inserted", again, err)
	}
	if n := countClicks(t, db); n != 2 {
		t.Errorf("after the rerun the store holds %d clicks, want 2", n)
	}
}

// A hostile link id (a quote, a backslash, a NUL byte, an emoji) goes in
// as it is, through a prepared statement, and is read back the same.
func TestMySQLWriterKeepsHostileValues(t *testing.T) {
	_, dsn := newMySQL(t)
	w := openWriter(t, dsn, Options{})
	hostile := Click{repairHour.Add(1500 * time.Millisecond), "x'); DROP TABLE clicks; -- \\ \x00 😀", "", "", false}
	if got, err := w.Insert(t.Context(), nil, []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{hostile}}}, nil); err != nil || got.Inserted != 1 {
		t.Fatalf("Insert = %+v, %v", got, err)
	}
	got, err := openStore(t, dsn).Clicks(t.Context(), mustQuery(t)(PresetQuery(PresetEvents)), repairHour, repairHour.Add(time.Hour))
	if err != nil || len(got) != 1 || got[0] != hostile {
		t.Errorf("Clicks = %#v, %v; want %#v", got, err, hostile)
	}
}

// writeUser creates a user for t with privileges on the test database's
// clicks table and returns its DSN.
func writeUser(t *testing.T, db *sqlx.DB, dsn, privileges string) string {
	t.Helper()
	name := fmt.Sprintf("crw_%08x", rand.Uint32())
	var database string
	if err := db.Get(&database, "SELECT DATABASE()"); err != nil {
		t.Fatal(err)
	}
	user := "'" + name + "'@'%'"
	return login(t, mysqltest.Admin(t), dsn, name, []string{
		"CREATE USER " + user + " IDENTIFIED BY '" + granteePassword + "'",
		"GRANT " + privileges + " ON `" + database + "`.clicks TO " + user,
	}, []string{"DROP USER " + user})
}
