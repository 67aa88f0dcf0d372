package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

// readerRole creates a login that may read clicks in the store of
// storeDSN (a PostgreSQL schema of the test's own), runs extra as the
// store's owner, and returns STORE_DSN as that login. Dropped when t ends.
func readerRole(t *testing.T, storeDSN, password string, extra ...string) string {
	t.Helper()
	db, err := sqlx.Open("postgres", storeDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	name := fmt.Sprintf("clickrecon_reader_%d", time.Now().UnixNano()%1e9)
	var schema string
	if err := db.Get(&schema, "SELECT current_schema()"); err != nil {
		t.Fatal(err)
	}
	stmts := []string{
		"CREATE ROLE " + name + " LOGIN PASSWORD '" + password + "'",
		`GRANT USAGE ON SCHEMA "` + schema + `" TO ` + name,
		"GRANT SELECT ON clicks TO " + name,
	}
	for _, stmt := range append(stmts, extra...) {
		if _, err := db.Exec(strings.ReplaceAll(stmt, "$ROLE", name)); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() { db.Exec("DROP OWNED BY " + name); db.Exec("DROP ROLE " + name) })
	return strings.Replace(storeDSN, "postgres@", name+":"+password+"@", 1)
}

// A store that lost nothing, read by a role under row-level security that
// hides lnk_b: its days show missing, which the run cannot tell from a
// loss. check and the run's report both say the table has row security
// on, for this role, and name the policy; a role that bypasses it (the
// table's owner, a superuser) hears nothing of it.
func TestRowSecurityIsSaidInCheckAndTheRun(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "postgres", api, api)
	owner := f.env["STORE_DSN"]

	r := f.check()
	if strings.Contains(r.stdout, "row-level security") {
		t.Errorf("the owner's check speaks of row-level security:\n%s", r.stdout)
	}

	f.env["STORE_DSN"] = readerRole(t, owner, "pw_rls_reader_17",
		"ALTER TABLE clicks ENABLE ROW LEVEL SECURITY",
		"CREATE POLICY reader_not_b ON clicks FOR SELECT TO $ROLE USING (link_id <> 'lnk_b')")
	r = f.check()
	if r.code != exitOK {
		t.Fatalf("check: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "row-level security") || !strings.Contains(r.stdout, "reader_not_b") || !strings.Contains(r.stdout, "ASSUMED") {
		t.Errorf("check does not name the row security and its policy:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "pw_rls_reader_17") {
		t.Error("the role's password appears in check's output")
	}

	r = f.run("--from", "2026-10-24", "--to", "2026-10-26")
	if r.code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rep := f.readReport()
	var said []string
	for _, fd := range rep.Findings {
		if fd.Kind == "row_security" {
			said = append(said, fd.Message)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "clicks") || !strings.Contains(said[0], "reader_not_b") {
		t.Errorf("report findings of kind row_security: %q; want one naming the table and its policy", said)
	}
	if !strings.Contains(r.stdout, "reader_not_b") {
		t.Errorf("the run's output does not name the policy:\n%s", r.stdout)
	}
}

// A custom query that groups days as its author's session does
// (ts::date, date_trunc('day', ts) on a timestamptz, the role's TimeZone
// set to Warsaw) reads a clean store as clean: it runs in a session whose
// zone is RECON_TZ, and check says so.
func TestCustomQueryRunsInRECONTZ(t *testing.T) {
	// 00:30 CEST on the 25th is the 24th in UTC.
	api := slices.Concat(dstWindowClicks(), clicksAt("lnk_c", "2026-10-24T22:30:00Z", "2026-10-25T12:00:00Z"))
	f := newFixture(t, "postgres", api, api)
	for name, text := range map[string]string{
		"cast":       "SELECT link_id, count(*) AS clicks FROM clicks WHERE ts::date = :day::date GROUP BY link_id",
		"date_trunc": "SELECT link_id, count(*) AS clicks FROM clicks WHERE date_trunc('day', ts) = :day::date GROUP BY link_id",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "count.sql")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			f.env["STORE_QUERY_FILE"] = path
			r := f.check()
			if r.code != exitOK || !strings.Contains(r.stdout, "ASSUMED: the custom store query runs in a session whose time zone is Europe/Warsaw (RECON_TZ)") {
				t.Errorf("check: exit %d; want 0 and the query's zone said\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = f.run("--from", "2026-10-24", "--to", "2026-10-26")
			if r.code != exitOK {
				t.Fatalf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			rep := f.readReport()
			if rep.Coverage.Match != 3 {
				t.Errorf("coverage %+v: want the clean store's 3 days to match\n%s", rep.Coverage, r.stdout)
			}
			var said bool
			for _, fd := range rep.Findings {
				said = said || fd.Kind == "query_zone" && strings.Contains(fd.Message, "Europe/Warsaw")
			}
			if !said {
				t.Errorf("findings %+v: want the query's zone said", rep.Findings)
			}
			os.RemoveAll(f.reportDir)
		})
	}
}
