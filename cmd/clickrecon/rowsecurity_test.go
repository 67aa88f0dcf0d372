package main

import (
	"fmt"
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
