package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/mysqltest"
	"github.com/clickrecon/clickrecon/reconcile"
)

// mysqlUser creates a user with password pw, allowed to read database db
// (all of the server's when empty), and drops it when t ends. It returns
// the user's name.
func mysqlUser(t *testing.T, pw, db string) string {
	t.Helper()
	admin := mysqltest.Admin(t)
	user := fmt.Sprintf("recon_%08x", rand.Uint32())
	admin.MustExec(fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", user, pw))
	t.Cleanup(func() { admin.Exec(fmt.Sprintf("DROP USER '%s'@'%%'", user)) })
	if db != "" {
		admin.MustExec(fmt.Sprintf("GRANT SELECT ON `%s`.* TO '%s'@'%%'", db, user))
	}
	return user
}

// withUser returns the mysql:// DSN raw with user and password pw.
func withUser(t *testing.T, raw, user, pw string) string {
	t.Helper()
	return respell(t, raw, func(u *url.URL) { u.User = url.UserPassword(user, pw) })
}

// A MySQL store fails to open as a PostgreSQL one does: a wrong password
// or database for good (ErrRefused: exit 2 asks for a fix), an unreachable
// host or port as a failure a retry may mend; the password never shows.
func TestMySQLOpenErrors(t *testing.T) {
	_, raw := mysqltest.New(t)
	db := strings.TrimPrefix(mustURL(t, raw).Path, "/")
	const pw = "s3cr3t-Pw"
	user := mysqlUser(t, pw, db)
	tests := []struct {
		name    string
		dsn     string
		refused bool
	}{
		{"wrong_password", withUser(t, raw, user, "not-"+pw), true},
		{"unknown_user", withUser(t, raw, "no_such_user_here", pw), true},
		{"unknown_database", respell(t, withUser(t, raw, user, pw), func(u *url.URL) { u.Path = "/no_such_database_here" }), true},
		{"database_not_granted", respell(t, withUser(t, raw, user, pw), func(u *url.URL) { u.Path = "/mysql" }), true},
		{"port_with_no_server", respell(t, withUser(t, raw, user, pw), func(u *url.URL) { u.Host = "127.0.0.1:1" }), false},
		{"host_that_does_not_resolve", respell(t, withUser(t, raw, user, pw), func(u *url.URL) { u.Host = "no-such-host.invalid:3306" }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			s, err := Open(ctx, storeDSN(t, tt.dsn), Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if errors.Is(err, ErrRefused) != tt.refused {
				t.Errorf("errors.Is(%v, ErrRefused) = %v, want %v", err, !tt.refused, tt.refused)
			}
			if strings.Contains(err.Error(), pw) {
				t.Errorf("error %q shows the password", err)
			}
			if !strings.Contains(err.Error(), "open store mysql://") || !strings.Contains(err.Error(), ":xxxxx@") {
				t.Errorf("error %q does not name the redacted DSN", err)
			}
		})
	}
	t.Run("right_credentials", func(t *testing.T) {
		openStore(t, withUser(t, raw, user, pw))
	})
}

// The store's sessions read a TIMESTAMP column as the instant it holds,
// whatever the server's time_zone and the zone its writer used: a day of 23
// or 25 hours in RECON_TZ is counted exactly, and the server needs no
// time-zone tables.
func TestMySQLTimestampColumnIgnoresTheServersTimeZone(t *testing.T) {
	db, raw := mysqltest.New(t)
	db.MustExec(`CREATE TABLE clicks (ts TIMESTAMP(3) NULL, link_id VARCHAR(64) NOT NULL, country_code CHAR(2) NULL, KEY (ts))`)
	// The writer's session is 13 hours ahead of UTC: it writes local
	// wall-clock times, which the server turns into instants.
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "SET time_zone = '+13:00'"); err != nil {
		t.Fatal(err)
	}
	for _, c := range append(append([]click{}, warsawSpringForward...), warsawFallBack...) {
		v, err := time.Parse(time.RFC3339Nano, c.ts)
		if err != nil {
			t.Fatal(err)
		}
		local := v.In(time.FixedZone("", 13*3600)).Format("2006-01-02 15:04:05.000")
		if _, err := conn.ExecContext(t.Context(), "INSERT INTO clicks (ts, link_id) VALUES (?, ?)", local, c.link); err != nil {
			t.Fatal(err)
		}
	}
	// The server's own zone is far from UTC too (its default for every
	// new session).
	admin := mysqltest.Admin(t)
	var global string
	if err := admin.Get(&global, "SELECT @@global.time_zone"); err != nil {
		t.Fatal(err)
	}
	admin.MustExec("SET GLOBAL time_zone = '-11:00'")
	t.Cleanup(func() { admin.MustExec("SET GLOBAL time_zone = ?", global) })

	s := openStore(t, raw)
	warsaw := mustZone(t, "Europe/Warsaw")
	q := mustQuery(t)(PresetQuery(PresetEvents))
	for day, want := range map[string]map[string]int64{
		"2026-03-29": {"before_jump": 2, "after_jump": 2},
		"2026-10-25": {"edge": 2, "repeated_hour": 2},
		"2026-03-30": {"outside": 1},
	} {
		got, err := s.Counts(t.Context(), q, mustDate(t, day), warsaw)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got.Links); diff != "" {
			t.Errorf("%s (-want +got):\n%s", day, diff)
		}
	}
	hours, err := s.HourlyCounts(t.Context(), q, mustDate(t, "2026-10-25"), warsaw)
	if err != nil {
		t.Fatal(err)
	}
	if len(hours) != 25 || hours[2].Clicks != 1 || hours[3].Clicks != 1 {
		t.Errorf("fall-back day: %d hours, the two 02:30s in hours 2 and 3: %+v", len(hours), hours)
	}
}

// A DATETIME column that holds local wall-clock times is read in
// STORE_TIMESTAMP_TZ: the day's bounds are sent as that zone's wall clock.
func TestMySQLDatetimeInTheTimestampZone(t *testing.T) {
	db, raw := mysqltest.New(t)
	applySchemas(t, db, "mysql")
	for _, c := range []struct{ ts, link string }{
		{"2026-03-28 23:59:59.999", "outside"},
		{"2026-03-29 00:00:00.000", "in"},
		{"2026-03-29 01:59:59.999", "in"},
		{"2026-03-29 03:00:00.000", "in"}, // the wall clock jumps from 02:00 to 03:00
		{"2026-03-29 23:59:59.999", "in"},
		{"2026-03-30 00:00:00.000", "outside"},
	} {
		db.MustExec("INSERT INTO clicks (ts, link_id) VALUES (?, ?)", c.ts, c.link)
	}
	warsaw := mustZone(t, "Europe/Warsaw")
	s, err := Open(t.Context(), storeDSN(t, raw), Options{TimestampZone: warsaw})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	day := mustDate(t, "2026-03-29")
	events := mustQuery(t)(PresetQuery(PresetEvents))
	got, err := s.Totals(t.Context(), events, []reconcile.Date{day}, warsaw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reconcile.Known(4), got[day]); diff != "" {
		t.Errorf("spring-forward day in Warsaw wall-clock (-want +got):\n%s", diff)
	}
	links, err := s.Counts(t.Context(), events, day, warsaw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"in": 4}, links.Links); diff != "" {
		t.Errorf("spring-forward day per link (-want +got):\n%s", diff)
	}
	// Read as UTC (no STORE_TIMESTAMP_TZ), the same rows shift by the
	// offset: the zone is what makes the count right.
	utc := openStore(t, raw)
	links, err = utc.Counts(t.Context(), events, day, warsaw)
	if err != nil {
		t.Fatal(err)
	}
	if links.Links["outside"] == 0 {
		t.Errorf("read as UTC, %v: the test proves nothing", links.Links)
	}
}

// STORE_TIMESTAMP_TZ names the zone of a DATETIME's wall clock: on a
// TIMESTAMP ts, an instant, it would shift every day, so it is refused
// (ErrRefused) and no day is counted.
func TestMySQLTimestampZoneRefusedForATimestampColumn(t *testing.T) {
	db, raw := mysqltest.New(t)
	db.MustExec(`CREATE TABLE clicks (ts TIMESTAMP(3) NOT NULL, link_id VARCHAR(64) NOT NULL, country_code CHAR(2) NULL, KEY (ts))`)
	warsaw := mustZone(t, "Europe/Warsaw")
	s, err := Open(t.Context(), storeDSN(t, raw), Options{TimestampZone: warsaw})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	day := mustDate(t, "2026-11-26")
	got, err := s.Totals(t.Context(), mustQuery(t)(PresetQuery(PresetEvents)), []reconcile.Date{day}, warsaw)
	if !errors.Is(err, ErrRefused) || got[day].Err == nil {
		t.Errorf("Totals = %+v, %v; want the day unknown and ErrRefused", got[day], err)
	}
	errorContains(t, err, "STORE_TIMESTAMP_TZ=Europe/Warsaw", "TIMESTAMP")
}

// A zero date, which a server without NO_ZERO_DATE stores for a time it
// could not read, has no day: no day can be checked while one exists.
func TestMySQLZeroDateIsUnreadable(t *testing.T) {
	db, raw := mysqltest.New(t)
	applySchemas(t, db, "mysql")
	db.MustExec("SET SESSION sql_mode = ''")
	db.MustExec("INSERT INTO clicks (ts, link_id) VALUES ('2026-11-26 10:00:00', 'a'), ('0000-00-00 00:00:00', 'a'), ('garbage', 'b')")
	s := openStore(t, raw)
	var ue *UnreadableError
	if err := s.CheckTimes(t.Context(), mustQuery(t)(PresetQuery(PresetEvents))); !errors.As(err, &ue) || ue.Rows != 2 {
		t.Errorf("CheckTimes: %v, want 2 unreadable rows", err)
	}
}

// The totals of the events preset are a range of the index on ts, read
// from the index alone, never a scan of the table.
func TestMySQLTotalsUseTheIndex(t *testing.T) {
	db, raw := mysqltest.New(t)
	applySchemas(t, db, "mysql")
	s := openStore(t, raw)
	nq, err := spanQuery(s.dialect)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	text, args, err := nq.bind(s.dialect, map[string]any{"from": from, "to": from.AddDate(0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Queryx("EXPLAIN "+text, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		row := map[string]any{}
		if err := rows.MapScan(row); err != nil {
			t.Fatal(err)
		}
		key, typ, extra := str(row["key"]), str(row["type"]), str(row["Extra"])
		if key != "clicks_ts_idx" || typ != "range" || !strings.Contains(extra, "Using index") {
			t.Errorf("plan: key %q, type %q, extra %q; want a range of clicks_ts_idx, using the index alone", key, typ, extra)
		}
	}
}

func str(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

// A connection the server kills mid-run fails that read with an error a
// retry may mend (never ErrBadQuery, never a count), and the next read
// gets a new connection.
func TestMySQLDyingConnection(t *testing.T) {
	db, raw := mysqltest.New(t)
	applySchemas(t, db, "mysql")
	insertClicks(t, db, []click{{ts: "2026-11-26T10:00:00.000Z", link: "a"}})
	s := openStore(t, raw)
	s.db.SetMaxOpenConns(1)
	day := mustDate(t, "2026-11-26")
	q := mustQuery(t)(CustomQuery("SELECT link_id, count(*) AS clicks FROM clicks WHERE ts >= :from AND ts < :to AND SLEEP(5) = 0 GROUP BY link_id"))
	var id int64
	if err := s.db.Get(&id, "SELECT CONNECTION_ID()"); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		db.Exec(fmt.Sprintf("KILL CONNECTION %d", id))
	}()
	started := time.Now()
	got, err := s.Counts(t.Context(), q, day, time.UTC)
	if err == nil {
		t.Fatalf("Counts on a killed connection = %+v, want an error", got)
	}
	if errors.Is(err, ErrBadQuery) {
		t.Errorf("error %v is ErrBadQuery: a retry could mend it", err)
	}
	if time.Since(started) > 4*time.Second {
		t.Errorf("the read took %v: it waited for the query instead of failing with its connection", time.Since(started))
	}
	totals, err := s.Totals(t.Context(), mustQuery(t)(PresetQuery(PresetEvents)), []reconcile.Date{day}, time.UTC)
	if err != nil || totals[day] != reconcile.Known(1) {
		t.Errorf("the next read: %+v, %v; want 1 click on a new connection", totals[day], err)
	}
}

// The store's identity is the server and the database, not the DSN's
// spelling: another host name for the same server, other parameters or
// the mariadb:// scheme name the same store; another database does not.
func TestIdentityMySQLIsTheStoreNotItsSpelling(t *testing.T) {
	_, raw := mysqltest.New(t)
	want := identity(t, raw)
	if !regexp.MustCompile(`^(mysql:server_uuid=[0-9a-f-]+|mariadb:host=[^;]+:[0-9]+;server_id=[0-9]+);db=mytest_`).MatchString(want) {
		t.Fatalf("Identity = %q, want mysql:server_uuid=UUID;db=NAME or mariadb:host=HOST:PORT;server_id=ID;db=NAME", want)
	}
	spellings := map[string]string{
		"mariadb_scheme":   respell(t, raw, func(u *url.URL) { u.Scheme = "mariadb" }),
		"extra_parameters": respell(t, raw, func(u *url.URL) { u.RawQuery = "timeout=7s&tls=false" }),
	}
	if u := mustURL(t, raw); u.Hostname() == "127.0.0.1" {
		spellings["localhost"] = respell(t, raw, func(u *url.URL) { u.Host = "localhost:" + u.Port() })
	}
	for name, spelling := range spellings {
		if got := identity(t, spelling); got != want {
			t.Errorf("%s: Identity = %q, want %q", name, got, want)
		}
	}
	_, other := mysqltest.New(t)
	if got := identity(t, other); got == want {
		t.Errorf("another database has the same identity %q", got)
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// MySQL's lexical rules: '?' placeholders, one argument per use of a
// parameter, '#' and "-- " comments, backslash escapes in strings.
func TestBindNamedMySQL(t *testing.T) {
	values := map[string]any{"day": "2026-11-26", "from": "F", "to": "T", "tz": "UTC"}
	tests := []struct {
		name     string
		query    string
		want     string
		wantArgs []any
	}{
		{"repeated_parameter", "WHERE ts >= :from AND ts < :to AND :from < :to", "WHERE ts >= ? AND ts < ? AND ? < ?", []any{"F", "T", "F", "T"}},
		{"hash_comment", "SELECT 1 # it's 10:30, :not_a_parameter\nFROM t WHERE d = :day", "SELECT 1 # it's 10:30, :not_a_parameter\nFROM t WHERE d = ?", []any{"2026-11-26"}},
		{"dash_comment_needs_a_space", "SELECT 1 -- :not_a_parameter\n, 2--1 AS x WHERE d = :day", "SELECT 1 -- :not_a_parameter\n, 2--1 AS x WHERE d = ?", []any{"2026-11-26"}},
		{"backslash_escaped_quote", `WHERE note <> 'it\'s :not_a_parameter' AND tz = :tz`, `WHERE note <> 'it\'s :not_a_parameter' AND tz = ?`, []any{"UTC"}},
		{"double_quoted_string", `WHERE note <> "a \" :x" AND tz = :tz`, `WHERE note <> "a \" :x" AND tz = ?`, []any{"UTC"}},
		{"assignment_is_not_a_parameter", "SELECT @n := 1, :day", "SELECT @n := 1, ?", []any{"2026-11-26"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nq, err := parseNamedMySQL(tt.query, allowedParam, useNamed)
			if err != nil {
				t.Fatal(err)
			}
			got, args, err := nq.bind(dsn.MySQL, values)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || !cmp.Equal(args, tt.wantArgs) {
				t.Errorf("bind = %q %v, want %q %v", got, args, tt.want, tt.wantArgs)
			}
		})
	}
	for name, query := range map[string]string{
		"positional_question_mark": "SELECT link_id, count(*) AS clicks FROM clicks WHERE day = ?",
		"unknown_parameter":        "SELECT 1 WHERE d = :since",
		"two_statements":           "SELECT 1; DELETE FROM clicks",
	} {
		if _, err := parseNamedMySQL(query, allowedParam, useNamed); err == nil {
			t.Errorf("%s: parseNamedMySQL(%q) succeeded", name, query)
		}
	}
}

// A custom query that only MySQL can read (a '#' comment holding a quote)
// is accepted, and fails on another store with ErrBadQuery instead of
// failing everywhere; one no dialect can read is refused at once.
func TestCustomQueryReadByItsDialectOnly(t *testing.T) {
	q, err := CustomQuery("SELECT link_id, count(*) AS clicks FROM clicks # MySQL's comment\nWHERE ts >= :from GROUP BY link_id")
	if err != nil {
		t.Fatalf("a MySQL query with a # comment: %v", err)
	}
	if _, _, err := q.in(dsn.MySQL).bind(dsn.MySQL, map[string]any{"from": "F"}); err != nil {
		t.Errorf("on MySQL: %v", err)
	}
	if _, _, err := q.in(dsn.Postgres).bind(dsn.Postgres, map[string]any{"from": "F"}); !errors.Is(err, ErrBadQuery) {
		t.Errorf("on PostgreSQL: %v, want ErrBadQuery", err)
	}
	if _, err := CustomQuery("SELECT link_id, :since AS clicks"); err == nil {
		t.Error("a query with an unknown parameter was accepted")
	}
}
