package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

var repairHour = time.Date(2026, 10, 24, 2, 0, 0, 0, time.UTC)

// writeEngine is a server a repair writes into under a lock, for the
// tests that hold each to the same behaviour: what differs is how the
// lock is seen waiting, how short its wait can be, what keeps it busy, and
// which click the server cannot hold.
type writeEngine struct {
	name string
	new  func(t *testing.T) (*sqlx.DB, string)
	// waitForLockWait returns once the day's transaction waits for a lock
	// on clicks that another session holds, or false when done is closed
	// first.
	waitForLockWait func(t *testing.T, db *sqlx.DB, done <-chan struct{}) bool
	// lockWait is the shortest lock wait the server honours.
	lockWait time.Duration
	// busyAt is where a receiver's insert keeps the day's hour from being
	// written.
	busyAt time.Time
	// unholdable is a link id the server refuses to store.
	unholdable string
	// grantee returns the DSN of a new login of the test's own that has
	// privileges (as GRANT lists them) on clicks, and nothing else.
	grantee func(t *testing.T, db *sqlx.DB, dsn, privileges string) string
	// withoutGrants are logins that may not write as repair does, and the
	// GRANT the refusal must name; enough is the privileges that are.
	withoutGrants []missingGrant
	enough        string
}

// granteePassword is the password of the logins grantee creates, which no
// error may show.
const granteePassword = "pw_grantee_secret_77"

// missingGrant is a login's privileges on clicks (and the insert
// statement it is opened with) that lack what repair needs, and the GRANT
// its refusal names.
type missingGrant struct {
	name, privileges, insert, want string
}

var writeEngines = []writeEngine{
	{
		name:            "postgres",
		new:             newPostgres(""),
		waitForLockWait: waitForLockWaiter,
		lockWait:        200 * time.Millisecond,
		// LOCK TABLE … IN SHARE MODE waits for any insert into the table.
		busyAt:     repairHour.Add(2 * time.Hour),
		unholdable: "lnk\x00nul", // text cannot hold a NUL byte
		grantee:    role,
		withoutGrants: []missingGrant{
			{"insert_only", "SELECT, INSERT", "", "GRANT UPDATE ON clicks"},
			{"insert_only_custom_insert", "SELECT, INSERT", "INSERT INTO clicks (ts, link_id) VALUES (:ts, :link_id)", "GRANT UPDATE ON clicks"},
			{"no_insert", "SELECT, UPDATE", "", "GRANT INSERT ON clicks"},
			{"no_select", "INSERT, UPDATE", "", "GRANT SELECT ON clicks"},
			{"no_select_custom_insert", "INSERT, UPDATE", "INSERT INTO clicks (ts, link_id) VALUES (:ts, :link_id)", "GRANT SELECT ON clicks"},
		},
		enough: "SELECT, INSERT, UPDATE",
	},
	{
		name:            "mysql",
		new:             newMySQL,
		waitForLockWait: waitForLockingRead,
		lockWait:        time.Second, // innodb_lock_wait_timeout counts whole seconds
		// InnoDB's next-key locks wait for an insert into the hour re-counted.
		busyAt:     repairHour.Add(10 * time.Minute),
		unholdable: strings.Repeat("x", 300), // longer than its VARCHAR(255): strict, not truncated
		grantee:    writeUser,
		withoutGrants: []missingGrant{
			{"no_select", "INSERT", "", "GRANT SELECT ON clicks"},
			{"no_insert", "SELECT", "", "GRANT INSERT ON clicks"},
			{"no_select_with_update", "INSERT, UPDATE", "", "GRANT SELECT ON clicks"},
		},
		enough: "SELECT, INSERT", // sql/setup/mysql/store-writer.sql's, on MariaDB
	},
}

// openWriter opens the writer on dsn and closes it when t ends.
func openWriter(t *testing.T, dsn string, o Options) *Writer {
	t.Helper()
	w, err := OpenWriter(t.Context(), storeWriteDSN(t, dsn), "", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// insertClick is a receiver's insert of one click.
const insertClick = "INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, ?)"

func countClicks(t *testing.T, db *sqlx.DB) int {
	t.Helper()
	var n int
	if err := db.Get(&n, "SELECT count(*) FROM clicks"); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitForLockWaiter returns once a backend of db's server waits for a lock
// on table clicks of db's schema.
func waitForLockWaiter(t *testing.T, db *sqlx.DB, done <-chan struct{}) bool {
	t.Helper()
	return waitForCount(t, db, 5*time.Millisecond, done, "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = to_regclass('clicks')")
}

// waitForCount returns once query, run on db with args every poll, counts
// a row: an event, not a guessed time. It returns false when done is
// closed first, and fails t if 5 s pass.
func waitForCount(t *testing.T, db *sqlx.DB, poll time.Duration, done <-chan struct{}, query string, args ...any) bool {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		var n int
		if err := db.Get(&n, query, args...); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return true
		}
		select {
		case <-done:
			return false
		case <-deadline:
			t.Fatalf("nothing counted by %q (%v) within 5s", query, args)
		case <-time.After(poll):
		}
	}
}

// A receiver whose insert is under way (its READ COMMITTED transaction
// open, the click inserted) when the day's transaction re-counts the hour
// is waited for, then counted: the day is refused with ErrChanged and the
// click is in the store once.
func TestWriterWaitsForAnOpenReceiverThenCountsIt(t *testing.T) {
	for _, e := range writeEngines {
		t.Run(e.name, func(t *testing.T) {
			db, dsn := e.new(t)
			w := openWriter(t, dsn, Options{})
			lost := Click{TS: repairHour.Add(time.Minute), LinkID: "lnk_a", CountryCode: "PL"}
			receiver, err := db.BeginTxx(t.Context(), &sql.TxOptions{Isolation: sql.LevelReadCommitted})
			if err != nil {
				t.Fatal(err)
			}
			defer receiver.Rollback()
			if _, err := receiver.Exec(db.Rebind(insertClick), lost.TS, lost.LinkID, lost.CountryCode); err != nil {
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
			waited := e.waitForLockWait(t, db, finished)
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
			if n := countClicks(t, db); n != 1 {
				t.Errorf("the store holds the click %d times, want once", n)
			}
		})
	}
}

// A receiver that keeps the hour's rows (on PostgreSQL, the table) longer
// than the lock wait makes the day refused with ErrBusy, bounded, with
// nothing written: never a hang.
func TestWriterBusyRefusesTheDay(t *testing.T) {
	for _, e := range writeEngines {
		t.Run(e.name, func(t *testing.T) {
			db, dsn := e.new(t)
			w := openWriter(t, dsn, Options{LockWait: e.lockWait})
			receiver, err := db.BeginTxx(t.Context(), &sql.TxOptions{Isolation: sql.LevelReadCommitted})
			if err != nil {
				t.Fatal(err)
			}
			defer receiver.Rollback()
			if _, err := receiver.Exec(db.Rebind(insertClick), e.busyAt, "lnk_busy", nil); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			hour := []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{{TS: repairHour, LinkID: "lnk_a", CountryCode: "PL"}}}}
			got, err := w.Insert(t.Context(), []HourCheck{{From: repairHour, To: repairHour.Add(time.Hour)}}, hour, nil)
			if !errors.Is(err, ErrBusy) || got.Inserted != 0 || !strings.Contains(err.Error(), "run repair again") {
				t.Fatalf("Insert = %+v, %v; want ErrBusy", got, err)
			}
			if d := time.Since(start); d > e.lockWait+3*time.Second {
				t.Errorf("Insert took %s with a lock wait of %s", d, e.lockWait)
			}
			receiver.Rollback()
			if n := countClicks(t, db); n != 0 {
				t.Errorf("the store holds %d clicks, want none", n)
			}
		})
	}
}

// role creates a login role for t with privileges on the test schema's
// clicks table and returns its DSN (trust authentication).
func role(t *testing.T, db *sqlx.DB, dsn, privileges string) string {
	t.Helper()
	name := fmt.Sprintf("clickrecon_repair_%08x", rand.Uint32())
	var schema string
	if err := db.Get(&schema, "SELECT current_schema()"); err != nil {
		t.Fatal(err)
	}
	return login(t, db, dsn, name, []string{
		"CREATE ROLE " + name + " LOGIN PASSWORD '" + granteePassword + "'",
		"GRANT USAGE ON SCHEMA " + pq.QuoteIdentifier(schema) + " TO " + name,
		"GRANT " + privileges + " ON clicks TO " + name,
	}, []string{"DROP OWNED BY " + name, "DROP ROLE " + name})
}

// login runs create (which makes the login name, of password
// granteePassword, and grants it what it may do) on db, and drop when t
// ends, and returns dsn as that login.
func login(t *testing.T, db *sqlx.DB, dsn, name string, create, drop []string) string {
	t.Helper()
	for _, stmt := range create {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		for _, stmt := range drop {
			if _, err := db.Exec(stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(name, granteePassword)
	return u.String()
}

// A STORE_WRITE_DSN login that may not take the lock (or, on MySQL, run
// the locking read), or insert, is refused when the writer opens, before
// anything is planned or written, with an error that names
// STORE_WRITE_DSN and the grant to give, and never the password; the
// privileges the docs give are enough.
func TestWriterWithoutTheGrantsIsRefused(t *testing.T) {
	for _, e := range writeEngines {
		t.Run(e.name, func(t *testing.T) {
			db, dsn := e.new(t)
			for _, tt := range e.withoutGrants {
				t.Run(tt.name, func(t *testing.T) {
					w, err := OpenWriter(t.Context(), storeWriteDSN(t, e.grantee(t, db, dsn, tt.privileges)), tt.insert, Options{})
					if err == nil {
						w.Close()
						t.Fatal("opened, want refused")
					}
					msg := err.Error()
					if !strings.Contains(msg, "STORE_WRITE_DSN") || !strings.Contains(msg, tt.want) || !errors.Is(err, ErrRefused) {
						t.Errorf("err = %v; want a configuration error naming STORE_WRITE_DSN and %q", err, tt.want)
					}
					if strings.Contains(msg, granteePassword) || strings.Contains(msg, "STORE_PRESET") {
						t.Errorf("err = %v; want no password and no read-side hint", err)
					}
				})
			}
			t.Run("enough", func(t *testing.T) {
				w := openWriter(t, e.grantee(t, db, dsn, e.enough), Options{})
				got, err := w.Insert(t.Context(), []HourCheck{{From: repairHour, To: repairHour.Add(time.Hour)}}, []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{{repairHour, "lnk_a", "PL", "", false}}}}, nil)
				if err != nil || got.Inserted != 1 {
					t.Errorf("Insert = %+v, %v", got, err)
				}
			})
		})
	}
}

// A click the store cannot hold refuses its hour alone: the day's other
// hours are written.
func TestWriterRejectedClickRefusesItsHourOnly(t *testing.T) {
	for _, e := range writeEngines {
		t.Run(e.name, func(t *testing.T) {
			db, dsn := e.new(t)
			w := openWriter(t, dsn, Options{})
			h2 := repairHour.Add(time.Hour)
			hours := []HourWrite{
				{From: repairHour, To: h2, Clicks: []Click{{repairHour, "lnk_ok", "PL", "", false}, {repairHour.Add(time.Second), e.unholdable, "PL", "", false}}},
				{From: h2, To: h2.Add(time.Hour), Clicks: []Click{{h2, "lnk_b", "", "", false}, {h2.Add(time.Second), "lnk_c", "DE", "", false}}},
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
		})
	}
}

// SQLite: the day's transaction holds the database's write lock from its
// BEGIN, so another writer cannot insert until it ends.
func TestSQLiteWriterHoldsTheWriteLock(t *testing.T) {
	_, dsn := newSQLite(t)
	path := strings.TrimPrefix(dsn, "sqlite:")
	w := openWriter(t, dsn, Options{})
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var during error
	hours := []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{{repairHour, "lnk_a", "PL", "", false}}}}
	got, err := w.Insert(t.Context(), []HourCheck{{From: repairHour, To: repairHour.Add(time.Hour)}}, hours, func(int) {
		_, during = other.Exec("INSERT INTO clicks (ts, link_id) VALUES ('2026-10-24T02:30:00.000Z', 'lnk_receiver')")
	})
	if err != nil || got.Inserted != 1 {
		t.Fatalf("Insert = %+v, %v", got, err)
	}
	if during == nil || !strings.Contains(during.Error(), "locked") {
		t.Errorf("another writer's insert during the day's transaction: %v; want it refused as locked", during)
	}
}

// CheckTarget accepts the store STORE_DSN reads, however STORE_WRITE_DSN
// spells it, and refuses another: another database, another schema's
// clicks table, another SQLite file.
func TestCheckTarget(t *testing.T) {
	for _, e := range []struct {
		name string
		new  func(t *testing.T) (*sqlx.DB, string)
		// same spells dsn otherwise.
		same func(t *testing.T, dsn string) string
		// others are the DSNs of other stores beside dsn's.
		others func(t *testing.T, db *sqlx.DB, dsn string) []string
	}{
		{"postgres", newPostgres(""), func(t *testing.T, dsn string) string {
			return strings.Replace(strings.Replace(dsn, "postgres://", "postgresql://", 1), "127.0.0.1", "localhost", 1)
		}, otherPostgresStores},
		{"mysql", newMySQL, func(t *testing.T, dsn string) string {
			return strings.Replace(strings.Replace(dsn, "mysql://", "mariadb://", 1), "127.0.0.1", "localhost", 1)
		}, func(t *testing.T, _ *sqlx.DB, _ string) []string {
			_, other := newMySQL(t)
			return []string{other}
		}},
		{"sqlite", newSQLite, func(t *testing.T, dsn string) string {
			link := filepath.Join(t.TempDir(), "link.db")
			if err := os.Symlink(strings.TrimPrefix(dsn, "sqlite:"), link); err != nil {
				t.Fatal(err)
			}
			return "sqlite:" + link
		}, func(t *testing.T, _ *sqlx.DB, _ string) []string {
			_, other := newSQLite(t)
			return []string{other}
		}},
	} {
		t.Run(e.name, func(t *testing.T) {
			db, dsn := e.new(t)
			s := openStore(t, dsn)
			if err := openWriter(t, e.same(t, dsn), Options{}).CheckTarget(t.Context(), s); err != nil {
				t.Errorf("the same store spelled otherwise: %v", err)
			}
			for _, other := range e.others(t, db, dsn) {
				err := openWriter(t, other, Options{}).CheckTarget(t.Context(), s)
				msg := fmt.Sprint(err)
				if !errors.Is(err, ErrOtherStore) || !errors.Is(err, ErrRefused) ||
					!strings.Contains(msg, "STORE_WRITE_DSN") || !strings.Contains(msg, "STORE_DSN") || !strings.Contains(msg, "a rerun will not help") {
					t.Errorf("CheckTarget into %s = %v; want ErrOtherStore naming STORE_WRITE_DSN and STORE_DSN", other, err)
				}
			}
		})
	}
}

// otherPostgresStores are, beside the store at dsn, another schema's and
// another database's clicks table on the same server.
func otherPostgresStores(t *testing.T, db *sqlx.DB, dsn string) []string {
	t.Helper()
	_, otherSchema := newPostgres("")(t)
	name := fmt.Sprintf("clickrecon_other_%08x", rand.Uint32())
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := db.Exec("DROP DATABASE " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, _ := url.Parse(dsn)
	u.Path = "/" + name
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	other, err := sqlx.Open("postgres", u.String())
	if err != nil {
		t.Fatal(err)
	}
	applySchemas(t, other, "postgres")
	other.Close()
	return []string{otherSchema, u.String()}
}
