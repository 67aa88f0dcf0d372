package store

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/mysqltest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// backend is a real database the store tests run against, holding the
// reference schemas from sql/store.
type backend struct {
	name    string
	dialect dsn.Dialect
	// new returns a writable handle on a fresh database with the
	// reference schemas and the DSN a Store opens it with.
	new func(t *testing.T) (*sqlx.DB, string)
	// inDay is the predicate "ts lies in [:from, :to)" in the dialect.
	inDay string
	// eventsCustom is a custom query equivalent to the events preset that
	// uses all four parameters (and, on PostgreSQL, casts).
	eventsCustom string
	// dailyCustom is a custom query equivalent to the daily preset.
	dailyCustom string
	// sumOfOnes sums 1 per row the way users write it: numeric on
	// PostgreSQL (sum of bigint), a float on SQLite (total()).
	sumOfOnes string
}

func backends() []backend {
	pg := backend{
		name:    "postgres",
		dialect: dsn.Postgres,
		new:     newPostgres(""),
		inDay:   "ts >= :from AND ts < :to",
		eventsCustom: `-- the events preset, the way a user would write it by hand
SELECT link_id::text AS link_id, count(*)::bigint AS clicks
FROM clicks
WHERE ts >= :from::timestamptz AND ts < :to::timestamptz
  AND (ts AT TIME ZONE :tz)::date = :day::date
GROUP BY link_id`,
		dailyCustom: "SELECT link_id, clicks FROM click_counts WHERE day = :day::date",
		sumOfOnes:   "sum(1::bigint)",
	}
	oddTZ := pg
	oddTZ.name = "postgres_session_timezone_kiritimati"
	oddTZ.new = newPostgres("Pacific/Kiritimati")
	lite := backend{
		name:    "sqlite",
		dialect: dsn.SQLite,
		new:     newSQLite,
		inDay:   "julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to)",
		eventsCustom: `-- the events preset, the way a user would write it by hand
SELECT link_id, count(*) AS clicks
FROM clicks
WHERE julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to)
  AND date(:from) <= :day AND :tz <> ''
GROUP BY link_id`,
		dailyCustom: "SELECT link_id, clicks FROM click_counts WHERE day = :day",
		sumOfOnes:   "total(1)",
	}
	my := backend{
		name:    "mysql",
		dialect: dsn.MySQL,
		new:     newMySQL,
		inDay:   "ts >= :from AND ts < :to",
		eventsCustom: `-- the events preset, the way a user would write it by hand
SELECT link_id, count(*) AS clicks # MySQL's own comment: 10:30 :not_a_parameter
FROM clicks
WHERE ts >= :from AND ts < :to
  AND :from < :to AND :day <> '' AND :tz <> ''
GROUP BY link_id`,
		dailyCustom: "SELECT link_id, clicks FROM click_counts WHERE day = :day",
		sumOfOnes:   "sum(1)",
	}
	return []backend{pg, oddTZ, lite, my}
}

// newMySQL creates a MySQL or MariaDB database with the reference schemas.
func newMySQL(t *testing.T) (*sqlx.DB, string) {
	t.Helper()
	db, dsn := mysqltest.New(t)
	applySchemas(t, db, "mysql")
	return db, dsn
}

// newPostgres returns a backend constructor on a pgtest schema whose
// sessions use timeZone, when set.
func newPostgres(timeZone string) func(t *testing.T) (*sqlx.DB, string) {
	return func(t *testing.T) (*sqlx.DB, string) {
		t.Helper()
		db, dsn := pgtest.New(t)
		applySchemas(t, db, "postgres")
		if timeZone == "" {
			return db, dsn
		}
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("options", "-c TimeZone="+timeZone)
		u.RawQuery = q.Encode()
		dsn = u.String()

		// Make sure the option takes effect, or the test proves nothing.
		c, err := pq.NewConnector(dsn)
		if err != nil {
			t.Fatal(err)
		}
		check := sql.OpenDB(c)
		defer check.Close()
		var got string
		if err := check.QueryRow("SHOW TimeZone").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != timeZone {
			t.Fatalf("session TimeZone = %q, want %q", got, timeZone)
		}
		return db, dsn
	}
}

// newSQLite creates a SQLite file with the reference schemas.
func newSQLite(t *testing.T) (*sqlx.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clicks.db")
	db, err := sqlx.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	applySchemas(t, db, "sqlite")
	return db, "sqlite:" + path
}

// applySchemas runs the reference schemas users adopt, read from
// sql/store, so that those are the schemas tested.
func applySchemas(t testing.TB, db *sqlx.DB, dir string) {
	t.Helper()
	for _, name := range []string{"events.sql", "daily.sql"} {
		path := filepath.Join("..", "..", "sql", "store", dir, name)
		schema, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(schema)); err != nil {
			t.Fatalf("apply %s: %v", path, err)
		}
	}
}

// click is one row of the events schema; country "" is NULL.
type click struct {
	ts      string // RFC 3339, as the user's writer stored it
	link    string
	country string
}

func insertClicks(t *testing.T, db *sqlx.DB, clicks []click) {
	t.Helper()
	insert := db.Rebind("INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, ?)")
	for _, c := range clicks {
		var country any
		if c.country != "" {
			country = c.country
		}
		var ts any = c.ts
		if db.DriverName() == "mysql" {
			// MySQL reads no offset in a time: the writer sends UTC.
			ts = mysqlUTC(t, c.ts)
		}
		if _, err := db.Exec(insert, ts, c.link, country); err != nil {
			t.Fatalf("insert click %v: %v", c, err)
		}
	}
}

// mysqlUTC returns ts, RFC 3339 with a 'T' or a space, as UTC wall-clock
// text for a DATETIME(3) column.
func mysqlUTC(t testing.TB, ts string) string {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, strings.Replace(ts, " ", "T", 1))
	if err != nil {
		t.Fatalf("click time %q: %v", ts, err)
	}
	return v.UTC().Format("2006-01-02 15:04:05.000")
}

// counter is one row of the daily schema.
type counter struct {
	day    string
	link   string
	clicks int64
}

func insertCounters(t *testing.T, db *sqlx.DB, counters []counter) {
	t.Helper()
	insert := db.Rebind("INSERT INTO click_counts (day, link_id, clicks) VALUES (?, ?, ?)")
	for _, c := range counters {
		if _, err := db.Exec(insert, c.day, c.link, c.clicks); err != nil {
			t.Fatalf("insert counter %v: %v", c, err)
		}
	}
}

// storeDSN reads rawDSN as STORE_DSN is read (ParseDSN), and fails t when it
// does not parse.
func storeDSN(t testing.TB, rawDSN string) dsn.Target {
	t.Helper()
	return dbtest.Parsed(t, ParseDSN, rawDSN)
}

// storeWriteDSN reads rawDSN as STORE_WRITE_DSN is read (ParseWriteDSN), and
// fails t when it does not parse.
func storeWriteDSN(t testing.TB, rawDSN string) dsn.Target {
	t.Helper()
	return dbtest.Parsed(t, ParseWriteDSN, rawDSN)
}

// openStore opens the store under test and closes it when t ends.
func openStore(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(t.Context(), storeDSN(t, dsn), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mustQuery returns a function taking the results of PresetQuery or
// CustomQuery that fails t on an error.
func mustQuery(t *testing.T) func(Query, error) Query {
	return func(q Query, err error) Query {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
}

// readAll reads and drops every row.
func readAll(rows *sql.Rows) error {
	for rows.Next() {
	}
	return rows.Err()
}

func mustDate(t testing.TB, s string) reconcile.Date {
	t.Helper()
	d, err := reconcile.ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// errorContains fails t unless err is non-nil and contains every one of
// want.
func errorContains(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}
