package repair_test

import (
	"bytes"
	"context"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/repair"
)

var mysqlHour = time.Date(2026, 10, 24, 2, 0, 0, 0, time.UTC)

// mysqlStore is a MariaDB (or MySQL) database with the reference events
// schema and one click in mysqlHour, and the arguments that point the
// mysql client at it.
func mysqlStore(t *testing.T) (*sqlx.DB, []string) {
	t.Helper()
	db, raw := mysqlEngine.database(t)
	args := mysqlClient(t, raw)
	if _, err := db.Exec("INSERT INTO clicks (ts, link_id) VALUES ('2026-10-24 02:30:00.000', 'lnk_there')"); err != nil {
		t.Fatal(err)
	}
	return db, args
}

// mysqlClient returns the arguments that point the mysql client at the
// database of the mysql:// DSN raw, or skips t when there is no client.
func mysqlClient(t *testing.T, raw string) []string {
	t.Helper()
	client, err := exec.LookPath("mysql")
	if err != nil {
		t.Skip("no mysql client on PATH")
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	if port == "" {
		port = "3306"
	}
	args := []string{client, "--batch", "--protocol=TCP", "-h", u.Hostname(), "-P", port, "-u", u.User.Username()}
	if pw, ok := u.User.Password(); ok {
		t.Setenv("MYSQL_PWD", pw)
	}
	return append(args, strings.TrimPrefix(u.Path, "/"))
}

// runMySQL pipes script into the mysql client with extra options first,
// and returns its error and what it printed on stderr.
func runMySQL(ctx context.Context, args []string, script string, extra ...string) (string, error) {
	cmd := exec.CommandContext(ctx, args[0], append(extra, args[1:]...)...)
	cmd.Stdin = strings.NewReader(script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.String(), err
}

// hostilePlan adds, to mysqlHour (which held 1 click when planned), two
// clicks whose link ids no quoting rule may misread.
func hostilePlan() ([]repair.DayPlan, []repair.Click) {
	add := []repair.Click{
		{TS: mysqlHour.Add(1500 * time.Millisecond), LinkID: `x'); DROP TABLE clicks; -- \' \\ "`, CountryCode: "PL"},
		{TS: mysqlHour.Add(59*time.Minute + 59*time.Second + 999*time.Millisecond), LinkID: "nul\x00 \\ 😀 ' end\\", CountryCode: ""},
	}
	h := repair.HourPlan{Hour: repair.Hour{From: mysqlHour, To: mysqlHour.Add(time.Hour), API: 3, Store: 1}, Add: add}
	return []repair.DayPlan{{Day: reconcile.DateOf(mysqlHour), API: 3, Store: 1, Hours: []repair.HourPlan{h}}}, add
}

func mysqlClicks(t *testing.T, db *sqlx.DB) []repair.Click {
	t.Helper()
	rows, err := db.Query("SELECT DATE_FORMAT(ts, '%Y-%m-%dT%H:%i:%s.%fZ'), link_id, COALESCE(country_code, '') FROM clicks")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []repair.Click
	for rows.Next() {
		var ts string
		var c repair.Click
		if err := rows.Scan(&ts, &c.LinkID, &c.CountryCode); err != nil {
			t.Fatal(err)
		}
		if c.TS, err = time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b repair.Click) int { return a.TS.Compare(b.TS) })
	return out
}

// repair.sql for MySQL, piped into the mysql client, writes hostile values
// (quotes, backslashes, a NUL byte, an emoji) exactly, whatever sql_mode an
// --init-command sets; a rerun fails its locking re-count, names why, and
// inserts nothing, even with --force (which runs on past the error).
func TestMySQLRepairSQLWritesHostileValuesUnderAnySQLMode(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []string
	}{
		{"server_sql_mode", nil},
		{"no_backslash_escapes", []string{"--init-command=SET sql_mode='NO_BACKSLASH_ESCAPES'"}},
		{"ansi_no_backslash_escapes", []string{"--init-command=SET sql_mode='ANSI,NO_BACKSLASH_ESCAPES'"}},
		{"empty_sql_mode", []string{"--init-command=SET sql_mode=''"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, args := mysqlStore(t)
			plans, add := hostilePlan()
			var script strings.Builder
			if err := repair.WriteSQL(&script, plans, dsn.MySQL); err != nil {
				t.Fatal(err)
			}
			if out, err := runMySQL(t.Context(), args, script.String(), tt.opts...); err != nil {
				t.Fatalf("mysql < repair.sql: %v: %s\n%s", err, out, script.String())
			}
			want := []repair.Click{add[0], {TS: mysqlHour.Add(30 * time.Minute), LinkID: "lnk_there"}, add[1]}
			if diff := gocmp.Diff(want, mysqlClicks(t, db)); diff != "" {
				t.Errorf("after repair.sql (-want +store):\n%s", diff)
			}
			for _, force := range [][]string{nil, {"--force"}} {
				out, err := runMySQL(t.Context(), args, script.String(), append(tt.opts, force...)...)
				failed := err != nil || force != nil // --force goes on, and exits 0
				if !failed || !strings.Contains(out, "store changed since the plan: nothing written; plan again") {
					t.Errorf("rerun %v: %v, %q; want the check to fail, naming why", force, err, out)
				}
				if n := len(mysqlClicks(t, db)); n != 3 {
					t.Errorf("after a rerun %v the store has %d clicks, want 3", force, n)
				}
			}
		})
	}
}
