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

// waitForLockWaiter returns once a backend of db's server waits for a lock
// on table clicks of db's schema: an event, not a guessed time. It fails t
// if none does before done is closed or 5 s pass.
func waitForLockWaiter(t *testing.T, db *sqlx.DB, done <-chan struct{}) bool {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		var n int
		if err := db.Get(&n, "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = to_regclass('clicks')"); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return true
		}
		select {
		case <-done:
			return false
		case <-deadline:
			t.Fatal("no backend waited for the clicks table within 5s")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// A receiver whose insert is under way (its READ COMMITTED transaction
// open) when the day's transaction begins is waited for, then counted: the
// day is refused with ErrChanged and the click is in the store once.
func TestWriterWaitsForAnOpenReceiverThenCountsIt(t *testing.T) {
	db, dsn := newPostgres("")(t)
	hour := []HourCheck{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: 0}}
	lost := Click{repairHour.Add(time.Minute), "lnk_a", "PL"}
	w, err := OpenWriter(t.Context(), storeWriteDSN(t, dsn), "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	receiver, err := db.BeginTxx(t.Context(), &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Rollback()
	if _, err := receiver.Exec("INSERT INTO clicks (ts, link_id, country_code) VALUES ($1, $2, $3)", lost.TS, lost.LinkID, lost.CountryCode); err != nil {
		t.Fatal(err)
	}
	type result struct {
		w   Written
		err error
	}
	done := make(chan result, 1)
	finished := make(chan struct{})
	go func() {
		got, err := w.Insert(context.Background(), hour, []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{lost}}}, nil)
		done <- result{got, err}
		close(finished)
	}()
	waited := waitForLockWaiter(t, db, finished)
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
	var n int
	if err := db.Get(&n, "SELECT count(*) FROM clicks"); err != nil || n != 1 {
		t.Errorf("the store holds the click %d times (%v), want once", n, err)
	}
}

// A receiver that keeps the table longer than the lock wait makes the day
// refused with ErrBusy, bounded, with nothing written: never a hang.
func TestWriterBusyTableRefusesTheDay(t *testing.T) {
	db, dsn := newPostgres("")(t)
	w, err := OpenWriter(t.Context(), storeWriteDSN(t, dsn), "", Options{LockWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	receiver, err := db.BeginTxx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Rollback()
	if _, err := receiver.Exec("INSERT INTO clicks (ts, link_id) VALUES ($1, 'lnk_busy')", repairHour.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	hour := []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{{repairHour, "lnk_a", "PL"}}}}
	got, err := w.Insert(t.Context(), []HourCheck{{From: repairHour, To: repairHour.Add(time.Hour)}}, hour, nil)
	if !errors.Is(err, ErrBusy) || got.Inserted != 0 || !strings.Contains(err.Error(), "run repair again") {
		t.Fatalf("Insert = %+v, %v; want ErrBusy", got, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Insert took %s with a lock wait of 200ms", d)
	}
	receiver.Rollback()
	var n int
	if err := db.Get(&n, "SELECT count(*) FROM clicks"); err != nil || n != 0 {
		t.Errorf("the store holds %d clicks (%v), want none", n, err)
	}
}

// role creates a login role for t with the given grants on the test
// schema's clicks table and returns its DSN (trust authentication).
func role(t *testing.T, db *sqlx.DB, dsn, grants string) string {
	t.Helper()
	name := fmt.Sprintf("clickrecon_repair_%08x", rand.Uint32())
	var schema string
	if err := db.Get(&schema, "SELECT current_schema()"); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"CREATE ROLE " + name + " LOGIN PASSWORD 'pw_role_secret_77'",
		"GRANT USAGE ON SCHEMA " + pq.QuoteIdentifier(schema) + " TO " + name,
		"GRANT " + grants + " ON clicks TO " + name,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		for _, stmt := range []string{"DROP OWNED BY " + name, "DROP ROLE " + name} {
			if _, err := db.Exec(stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(name, "pw_role_secret_77")
	return u.String()
}

// A STORE_WRITE_DSN role that may not take the lock, or insert, is refused
// when the writer opens, before anything is planned or written, with an
// error that names STORE_WRITE_DSN and the grant to give.
func TestWriterRoleWithoutTheGrantsIsRefused(t *testing.T) {
	db, dsn := newPostgres("")(t)
	for _, tt := range []struct {
		name, grants, insert, want string
	}{
		{"insert_only", "SELECT, INSERT", "", "GRANT UPDATE ON clicks"},
		{"insert_only_custom_insert", "SELECT, INSERT", "INSERT INTO clicks (ts, link_id) VALUES (:ts, :link_id)", "GRANT UPDATE ON clicks"},
		{"no_insert", "SELECT, UPDATE", "", "GRANT INSERT ON clicks"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, err := OpenWriter(t.Context(), storeWriteDSN(t, role(t, db, dsn, tt.grants)), tt.insert, Options{})
			if err == nil {
				w.Close()
				t.Fatal("opened, want refused")
			}
			msg := err.Error()
			if !strings.Contains(msg, "STORE_WRITE_DSN") || !strings.Contains(msg, tt.want) || !errors.Is(err, ErrRefused) {
				t.Errorf("err = %v; want a configuration error naming STORE_WRITE_DSN and %q", err, tt.want)
			}
			if strings.Contains(msg, "pw_role_secret_77") || strings.Contains(msg, "STORE_PRESET") {
				t.Errorf("err = %v; want no password and no read-side hint", err)
			}
		})
	}
	t.Run("enough", func(t *testing.T) {
		w, err := OpenWriter(t.Context(), storeWriteDSN(t, role(t, db, dsn, "SELECT, INSERT, UPDATE")), "", Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		got, err := w.Insert(t.Context(), nil, []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{{repairHour, "lnk_a", "PL"}}}}, nil)
		if err != nil || got.Inserted != 1 {
			t.Errorf("Insert = %+v, %v", got, err)
		}
	})
}

// A click the store cannot hold (a NUL byte in PostgreSQL text) refuses
// its hour alone: the day's other hours are written.
func TestWriterRejectedClickRefusesItsHourOnly(t *testing.T) {
	db, dsn := newPostgres("")(t)
	w, err := OpenWriter(t.Context(), storeWriteDSN(t, dsn), "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	h2 := repairHour.Add(time.Hour)
	hours := []HourWrite{
		{From: repairHour, To: h2, Clicks: []Click{{repairHour, "lnk_ok", "PL"}, {repairHour.Add(time.Second), "lnk\x00nul", "PL"}}},
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

// SQLite: the day's transaction holds the database's write lock from its
// BEGIN, so another writer cannot insert until it ends.
func TestSQLiteWriterHoldsTheWriteLock(t *testing.T) {
	_, dsn := newSQLite(t)
	path := strings.TrimPrefix(dsn, "sqlite:")
	w, err := OpenWriter(t.Context(), storeWriteDSN(t, dsn), "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var during error
	hours := []HourWrite{{From: repairHour, To: repairHour.Add(time.Hour), Clicks: []Click{{repairHour, "lnk_a", "PL"}}}}
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
	refusedAs := func(t *testing.T, err error) {
		t.Helper()
		msg := fmt.Sprint(err)
		if !errors.Is(err, ErrOtherStore) || !errors.Is(err, ErrRefused) ||
			!strings.Contains(msg, "STORE_WRITE_DSN") || !strings.Contains(msg, "STORE_DSN") || !strings.Contains(msg, "a rerun will not help") {
			t.Errorf("CheckTarget = %v; want ErrOtherStore naming STORE_WRITE_DSN and STORE_DSN", err)
		}
	}
	writer := func(t *testing.T, dsn string) *Writer {
		t.Helper()
		w, err := OpenWriter(t.Context(), storeWriteDSN(t, dsn), "", Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		return w
	}
	t.Run("postgres", func(t *testing.T) {
		db, dsn := newPostgres("")(t)
		s := openStore(t, dsn)
		same := strings.Replace(strings.Replace(dsn, "postgres://", "postgresql://", 1), "127.0.0.1", "localhost", 1)
		if err := writer(t, same).CheckTarget(t.Context(), s); err != nil {
			t.Errorf("the same store spelled otherwise: %v", err)
		}
		_, otherSchema := newPostgres("")(t)
		refusedAs(t, writer(t, otherSchema).CheckTarget(t.Context(), s))

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
		refusedAs(t, writer(t, u.String()).CheckTarget(t.Context(), s))
	})
	t.Run("sqlite", func(t *testing.T) {
		_, dsn := newSQLite(t)
		s := openStore(t, dsn)
		link := filepath.Join(t.TempDir(), "link.db")
		if err := os.Symlink(strings.TrimPrefix(dsn, "sqlite:"), link); err != nil {
			t.Fatal(err)
		}
		if err := writer(t, "sqlite:"+link).CheckTarget(t.Context(), s); err != nil {
			t.Errorf("the same file through a link: %v", err)
		}
		_, other := newSQLite(t)
		refusedAs(t, writer(t, other).CheckTarget(t.Context(), s))
	})
}
