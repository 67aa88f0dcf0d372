package store

import (
	"strings"
	"testing"
	"time"
)

// Row-level security is said where it hides rows from STORE_DSN's role,
// as PostgreSQL decides it: not for a role that bypasses it (BYPASSRLS),
// nor for the table's owner unless the table forces it on its owner too;
// a table with no policy for the role shows it nothing, and is said so.
func TestRowSecurityIsAssumedOnlyWhereItApplies(t *testing.T) {
	db, dsn := newPostgres("")(t)
	events := mustQuery(t)(PresetQuery(PresetEvents))
	said := func(t *testing.T, dsn string) string {
		t.Helper()
		as, err := openStore(t, dsn).Assumptions(t.Context(), events, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for _, a := range as {
			if a.Kind != AssumedRowSecurity {
				t.Errorf("assumption of kind %q: %s", a.Kind, a.Message)
			}
			msgs = append(msgs, a.Message)
		}
		return strings.Join(msgs, "\n")
	}
	reader := role(t, db, dsn, "SELECT")
	name := strings.SplitN(strings.TrimPrefix(reader, "postgres://"), ":", 2)[0]
	if got := said(t, reader); got != "" {
		t.Errorf("row security off: said %q", got)
	}
	db.MustExec("ALTER TABLE clicks ENABLE ROW LEVEL SECURITY")
	if got := said(t, reader); !strings.Contains(got, "no policy lets the role read a row") {
		t.Errorf("no policy: said %q; want that the role sees no row", got)
	}
	db.MustExec("CREATE POLICY for_others ON clicks FOR SELECT TO pg_monitor USING (true)")
	db.MustExec("CREATE POLICY only_pl ON clicks FOR SELECT TO " + name + " USING (country_code = 'PL')")
	got := said(t, reader)
	if !strings.Contains(got, "table clicks") || !strings.Contains(got, "(only_pl)") || !strings.Contains(got, name) {
		t.Errorf("a policy for the role: said %q; want the table, the role and only its policy", got)
	}
	if got := said(t, dsn); got != "" {
		t.Errorf("the owner (a superuser) is said to be under row security: %q", got)
	}
	db.MustExec("ALTER ROLE " + name + " BYPASSRLS")
	if got := said(t, reader); got != "" {
		t.Errorf("a BYPASSRLS role: said %q", got)
	}
	db.MustExec("ALTER ROLE " + name + " NOBYPASSRLS")
	db.MustExec("ALTER TABLE clicks OWNER TO " + name)
	if got := said(t, reader); got != "" {
		t.Errorf("the table's owner: said %q", got)
	}
	db.MustExec("ALTER TABLE clicks FORCE ROW LEVEL SECURITY")
	if got := said(t, reader); !strings.Contains(got, "(only_pl)") {
		t.Errorf("the owner of a table that forces row security: said %q; want its policy", got)
	}
}
