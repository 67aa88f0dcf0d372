package clickrecon_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon"
	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/mysqltest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/store"
)

// The set-up SQL of sql/setup/postgres and sql/setup/mysql is applied as a
// user would apply it, on an events store and on a daily store, and each
// role is then used by clickrecon's own code: the files are checked to
// run as shipped, to create the same roles on every engine, and to give
// each role what it needs and no more.
//
// Roles belong to the whole server, not to a schema, so each test renames
// the file's role to a name of its own (and the schema public to its
// pgtest schema, the database clicks to its mysqltest database) and drops
// the role when it ends.

// setupSQL returns the embedded set-up file name (engine/file) with each
// key of rename replaced by its value; a key the file does not hold fails
// the test, so a renamed role in a file cannot go unnoticed.
func setupSQL(t *testing.T, name string, rename map[string]string) string {
	t.Helper()
	if !strings.Contains(name, "/") {
		name = "postgres/" + name
	}
	b, err := clickrecon.SQL.ReadFile("sql/setup/" + name)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for old, new := range rename {
		if !strings.Contains(text, old) {
			t.Fatalf("%s does not hold %q", name, old)
		}
		text = strings.ReplaceAll(text, old, new)
	}
	return text
}

// uniqueRole returns a role name no other test uses, and drops the role
// (and its grants in the test database) when t ends.
func uniqueRole(t *testing.T, admin *sqlx.DB, prefix string) string {
	t.Helper()
	role := fmt.Sprintf("%s_%08x", prefix, rand.Uint32())
	t.Cleanup(func() {
		for _, q := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := admin.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	return role
}

// asRole returns dsn with its user replaced by role (the test server
// trusts local connections, so no password is needed), and with its
// search_path kept only when keepPath is set.
func asRole(t *testing.T, dsn, role string, keepPath bool) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	if !keepPath {
		q := u.Query()
		q.Del("search_path")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// currentSchema is the schema the pgtest handle's search_path names.
func currentSchema(t *testing.T, db *sqlx.DB) string {
	t.Helper()
	var s string
	if err := db.Get(&s, "SELECT current_schema()"); err != nil {
		t.Fatal(err)
	}
	return s
}

// eventsStore creates the reference events table in the test's schema,
// with one click on 2026-11-25 (UTC).
func eventsStore(t *testing.T, admin *sqlx.DB) {
	t.Helper()
	schema, err := clickrecon.SQL.ReadFile("sql/store/postgres/events.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(string(schema)); err != nil {
		t.Fatalf("events.sql: %v", err)
	}
	if _, err := admin.Exec(`INSERT INTO clicks (ts, link_id, country_code) VALUES ('2026-11-25T10:00:00Z', 'lnk_a', 'PL')`); err != nil {
		t.Fatal(err)
	}
}

// refused runs q in its own READ WRITE transaction on db and fails the
// test unless PostgreSQL refuses it for want of a privilege.
func refused(t *testing.T, db *sqlx.DB, q string) {
	t.Helper()
	tx, err := db.BeginTxx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("SET TRANSACTION READ WRITE"); err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(q)
	var pqErr *pq.Error
	if !errors.As(err, &pqErr) || pqErr.Code != "42501" {
		t.Errorf("%s: got %v, want insufficient_privilege (42501)", q, err)
	}
}

// allowed runs q in its own transaction on db, rolled back, and fails the
// test if it errs.
func allowed(t *testing.T, db *sqlx.DB, q string) {
	t.Helper()
	tx, err := db.BeginTxx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(q); err != nil {
		t.Errorf("%s: %v", q, err)
	}
}

func connectAs(t *testing.T, dsn string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Connect("postgres", dsn)
	if err != nil {
		t.Fatalf("connect as the role: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSetupStoreReader(t *testing.T) {
	for _, preset := range []string{store.PresetEvents, store.PresetDaily} {
		t.Run(preset, func(t *testing.T) { testSetupStoreReader(t, preset) })
	}
}

func testSetupStoreReader(t *testing.T, preset string) {
	admin, dsn := pgtest.New(t)
	table := "clicks"
	if preset == store.PresetDaily {
		table = "click_counts"
		dailyStore(t, admin, "sql/store/postgres/daily.sql")
	} else {
		eventsStore(t, admin)
	}
	role := uniqueRole(t, admin, "clickrecon_reader")
	text := setupSQL(t, "store-reader-"+preset+".sql", map[string]string{
		"clickrecon_reader": role,
		"SCHEMA public":     "SCHEMA " + pq.QuoteIdentifier(currentSchema(t, admin)),
	})
	if _, err := admin.Exec(text); err != nil {
		t.Fatalf("store-reader-%s.sql: %v", preset, err)
	}
	readerDSN := asRole(t, dsn, role, true)
	readsAsReader(t, readerDSN, store.ParseDSN, preset, role, "postgres:cluster=")

	db := connectAs(t, readerDSN)
	// The run lock works in the role's read-only sessions.
	allowed(t, db, "SELECT pg_try_advisory_lock(42)")
	// A session is read-only by default...
	if _, err := db.Exec("INSERT INTO " + table + " (link_id) VALUES ('x')"); err == nil {
		t.Error("the reader inserted a click in a default session")
	}
	// ...and a READ WRITE one still may not write.
	for _, q := range []string{
		"INSERT INTO " + table + " (link_id) VALUES ('x')",
		"UPDATE " + table + " SET link_id = 'x'",
		"DELETE FROM " + table,
		"TRUNCATE " + table,
		"LOCK TABLE " + table + " IN SHARE MODE",
		"CREATE TABLE reader_table (x int)",
	} {
		refused(t, db, q)
	}
}

// insertsAsWriter opens the store as clickrecon's repair writer does
// (which checks the role's grants), re-counts the hour of the store's one
// click of 2026-11-25 and inserts one more through writerDSN.
func insertsAsWriter(t *testing.T, writerDSN, role string) {
	t.Helper()
	w, err := store.OpenWriter(t.Context(), dbtest.Parsed(t, store.ParseWriteDSN, writerDSN), "", store.Options{})
	if err != nil {
		t.Fatalf("open the store for writing as %s: %v", role, err)
	}
	defer w.Close()
	hour := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	got, err := w.Insert(t.Context(),
		[]store.HourCheck{{From: hour, To: hour.Add(time.Hour), Clicks: 1}},
		[]store.HourWrite{{From: hour, To: hour.Add(time.Hour),
			Clicks: []store.Click{{TS: hour.Add(time.Minute), LinkID: "lnk_a", CountryCode: "PL"}}}}, nil)
	if err != nil || got.Inserted != 1 {
		t.Errorf("Insert as the writer: %+v, %v; want 1 click", got, err)
	}
}

// dailyStore creates the reference daily table from file in admin's
// database, with 3 clicks of lnk_a on 2026-11-25.
func dailyStore(t *testing.T, admin *sqlx.DB, file string) {
	t.Helper()
	schema, err := clickrecon.SQL.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(string(schema)); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if _, err := admin.Exec(`INSERT INTO click_counts (day, link_id, clicks) VALUES ('2026-11-25', 'lnk_a', 3)`); err != nil {
		t.Fatal(err)
	}
}

// readsAsReader checks that clickrecon's probe passes and its count reads
// the store's clicks of 2026-11-25 (1 in the events store, 3 in the daily
// one) through the reader's DSN, and that it knows the store by its
// identity (which starts with identity).
func readsAsReader(t *testing.T, readerDSN string, parse func(string) (dsn.Target, error), preset, role, identity string) {
	t.Helper()
	target := dbtest.Parsed(t, parse, readerDSN)
	q, err := store.PresetQuery(preset)
	if err != nil {
		t.Fatal(err)
	}
	day, _ := reconcile.ParseDate("2026-11-25")
	if err := store.Probe(t.Context(), target, store.Options{}, q, day, time.UTC); err != nil {
		t.Errorf("the probe as %s: %v", role, err)
	}
	s, err := store.Open(t.Context(), target, store.Options{})
	if err != nil {
		t.Fatalf("open the store as %s: %v", role, err)
	}
	defer s.Close()
	want := int64(1)
	if preset == store.PresetDaily {
		want = 3
	}
	got, err := s.Totals(t.Context(), q, []reconcile.Date{day}, time.UTC)
	if err != nil || got[day].Err != nil || got[day].Clicks != want {
		t.Errorf("Totals as the reader: %+v, %v; want %d clicks", got[day], err, want)
	}
	if id, err := s.Identity(t.Context()); err != nil || id == "" || !strings.HasPrefix(id, identity) {
		t.Errorf("Identity as the reader: %q, %v; want %s…", id, err, identity)
	}
}

func TestSetupStoreWriter(t *testing.T) {
	admin, dsn := pgtest.New(t)
	eventsStore(t, admin)
	role := uniqueRole(t, admin, "clickrecon_writer")
	text := setupSQL(t, "postgres/store-writer.sql", map[string]string{
		"clickrecon_writer": role,
		"SCHEMA public":     "SCHEMA " + pq.QuoteIdentifier(currentSchema(t, admin)),
	})
	if _, err := admin.Exec(text); err != nil {
		t.Fatalf("store-writer.sql: %v", err)
	}
	writerDSN := asRole(t, dsn, role, true)

	insertsAsWriter(t, writerDSN, role)
	var rows int
	if err := admin.Get(&rows, "SELECT count(*) FROM clicks"); err != nil || rows != 2 {
		t.Errorf("the store holds %d rows (%v), want 2", rows, err)
	}

	db := connectAs(t, writerDSN)
	// The lock a repair takes around an hour's re-count and insert.
	allowed(t, db, "LOCK TABLE clicks IN SHARE MODE")
	// A repair never deletes: the role cannot.
	for _, q := range []string{
		"DELETE FROM clicks",
		"TRUNCATE clicks",
		"CREATE TABLE writer_table (x int)",
	} {
		refused(t, db, q)
	}
}

func TestSetupHistory(t *testing.T) {
	admin, dsn := pgtest.New(t)
	role := uniqueRole(t, admin, "clickrecon_history")
	text := setupSQL(t, "history.sql", map[string]string{"clickrecon_history": role})
	if _, err := admin.Exec(text); err != nil {
		t.Fatalf("history.sql: %v", err)
	}
	t.Cleanup(func() { // before the role is dropped
		if _, err := admin.Exec("DROP SCHEMA " + role + " CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", role, err)
		}
	})
	// The DSN names no search_path: the role's own setting finds its schema.
	historyDSN := asRole(t, dsn, role, false)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	applied, err := history.Migrate(ctx, dbtest.Parsed(t, history.ParseMigrateDSN, historyDSN))
	if err != nil || len(applied) == 0 {
		t.Fatalf("migrate as %s: applied %v, %v", role, applied, err)
	}
	var tables int
	if err := admin.Get(&tables, "SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tableowner = $1", role); err != nil || tables == 0 {
		t.Errorf("the role's schema holds %d tables it owns (%v), want the history's", tables, err)
	}
	if again, err := history.Migrate(ctx, dbtest.Parsed(t, history.ParseMigrateDSN, historyDSN)); err != nil || len(again) != 0 {
		t.Errorf("a second migrate applied %v, %v; want nothing", again, err)
	}
	h, err := history.Open(ctx, dbtest.Parsed(t, history.ParseDSN, historyDSN))
	if err != nil {
		t.Fatalf("open the history as %s: %v", role, err)
	}
	h.Close()
}

// The MySQL and MariaDB set-up SQL, run as shipped on an events store and
// on a daily store, creates the roles of the PostgreSQL files, under the
// same names: the reader counts through clickrecon's own code and may not
// write, and the writer opens as a repair opens it (its grants checked)
// and inserts.
func TestSetupMySQL(t *testing.T) {
	for _, preset := range []string{store.PresetEvents, store.PresetDaily} {
		t.Run(preset, func(t *testing.T) {
			admin, raw := mysqltest.New(t)
			database := strings.TrimPrefix(mustURL(t, raw).Path, "/")
			table := "clicks"
			if preset == store.PresetDaily {
				table = "click_counts"
				dailyStore(t, admin, "sql/store/mysql/daily.sql")
			} else {
				eventsStore := mustRead(t, "sql/store/mysql/events.sql")
				if _, err := admin.Exec(eventsStore); err != nil {
					t.Fatalf("events.sql: %v", err)
				}
				if _, err := admin.Exec(`INSERT INTO clicks (ts, link_id, country_code) VALUES ('2026-11-25 10:00:00', 'lnk_a', 'PL')`); err != nil {
					t.Fatal(err)
				}
			}
			server := mysqltest.Admin(t)
			reader := mysqlUser(t, server, "clickrecon_reader")
			text := setupSQL(t, "mysql/store-reader-"+preset+".sql", map[string]string{
				"'clickrecon_reader'": "'" + reader + "'",
				"clicks.":             "`" + database + "`.",
				"'change-me'":         "'" + mysqlPassword + "'",
			})
			if _, err := admin.Exec(text); err != nil {
				t.Fatalf("store-reader-%s.sql: %v", preset, err)
			}
			readerDSN := asMySQLUser(t, raw, reader)
			readsAsReader(t, readerDSN, store.ParseDSN, preset, reader, "") // mysql: or mariadb:
			db := connectMySQL(t, readerDSN)
			for _, q := range []string{
				"INSERT INTO " + table + " (link_id) VALUES ('x')",
				"UPDATE " + table + " SET link_id = 'x'",
				"DELETE FROM " + table,
				"CREATE TABLE reader_table (x int)",
			} {
				if _, err := db.Exec(q); err == nil {
					t.Errorf("%s: the reader may", q)
				} else if !strings.Contains(err.Error(), "denied") {
					t.Errorf("%s: got %v, want access denied", q, err)
				}
			}
			if preset == store.PresetDaily {
				return // a daily store has no writer
			}
			writer := mysqlUser(t, server, "clickrecon_writer")
			text = setupSQL(t, "mysql/store-writer.sql", map[string]string{
				"'clickrecon_writer'": "'" + writer + "'",
				"clicks.":             "`" + database + "`.",
				"'change-me-too'":     "'" + mysqlPassword + "'",
			})
			if _, err := admin.Exec(text); err != nil {
				t.Fatalf("store-writer.sql: %v", err)
			}
			insertsAsWriter(t, asMySQLUser(t, raw, writer), writer)
			wdb := connectMySQL(t, asMySQLUser(t, raw, writer))
			if _, err := wdb.Exec("DELETE FROM clicks"); err == nil || !strings.Contains(err.Error(), "denied") {
				t.Errorf("DELETE as the writer: %v, want access denied", err)
			}
		})
	}
}

// mysqlPassword is every test user's password.
const mysqlPassword = "setup-test-pw"

// mysqlUser returns a user name no other test uses, and drops the user
// when t ends (DROP USER IF EXISTS: the file under test creates it).
func mysqlUser(t *testing.T, server *sqlx.DB, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s_%08x", prefix, rand.Uint32())
	t.Cleanup(func() {
		if _, err := server.Exec("DROP USER IF EXISTS '" + name + "'@'%'"); err != nil {
			t.Errorf("drop user %s: %v", name, err)
		}
	})
	return name
}

// asMySQLUser returns raw (a mysql:// URL) as user, with mysqlPassword.
func asMySQLUser(t *testing.T, raw, user string) string {
	t.Helper()
	u := mustURL(t, raw)
	u.User = url.UserPassword(user, mysqlPassword)
	return u.String()
}

// connectMySQL opens a pool on the mysql:// URL raw, closed when t ends.
func connectMySQL(t *testing.T, raw string) *sqlx.DB {
	t.Helper()
	target := dbtest.Parsed(t, store.ParseDSN, raw)
	db, err := sqlx.Connect("mysql", target.MySQLConfig.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustRead(t *testing.T, file string) string {
	t.Helper()
	b, err := clickrecon.SQL.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
