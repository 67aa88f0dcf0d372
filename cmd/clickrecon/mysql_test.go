package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/mysqltest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/report"
)

// A whole run against a MariaDB store: the lost click of the 25-hour day
// and the duplicate of the next are found exactly, drilled down to the
// link and the hour, and the run holds the MySQL named lock (no history).
func TestRunMySQLStore(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "mysql", api, lossAndDuplicate(api))
	r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	got := f.readReport()
	wantDays := []report.Day{
		{Date: "2026-10-24", Hours: 24, API: n(4), Local: n(4), Delta: n(0), Status: "match", Severity: "ok", Settled: true},
		{Date: "2026-10-25", Hours: 25, API: n(5), Local: n(4), Delta: n(-1), Status: "missing", Severity: "warn", Settled: true,
			HoursWithGap: []report.Hour{{Start: "2026-10-25T02:00:00+01:00", API: 1, Local: 0, Delta: -1}}},
		{Date: "2026-10-26", Hours: 24, API: n(4), Local: n(5), Delta: n(1), Status: "surplus", Severity: "warn", Settled: true,
			HoursWithGap: []report.Hour{{Start: "2026-10-26T10:00:00+01:00", API: 1, Local: 2, Delta: 1}}},
	}
	if diff := cmp.Diff(wantDays, got.Days); diff != "" {
		t.Errorf("days (-want +got):\n%s", diff)
	}
	wantLinks := []report.Link{
		{Date: "2026-10-25", LinkID: "lnk_a", API: 3, Local: 2, Delta: -1, Status: "missing"},
		{Date: "2026-10-26", LinkID: "lnk_a", API: 2, Local: 3, Delta: 1, Status: "surplus"},
	}
	if diff := cmp.Diff(wantLinks, got.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if got.Status != "discrepancies" || got.Coverage != (report.Coverage{Days: 3, Match: 1, Missing: 1, Surplus: 1}) {
		t.Errorf("status %q, coverage %+v", got.Status, got.Coverage)
	}
	if got.StoreID != identityStoreID(t, f.env["STORE_DSN"], "events") {
		t.Errorf("store_id %q, want the opaque id of the store's identity and its query", got.StoreID)
	}
	if !strings.Contains(r.stderr, "named lock on mysql://") || strings.Contains(r.stderr, "run lock could not be taken") {
		t.Errorf("the run did not hold the MySQL named lock:\n%s", r.stderr)
	}
}

// A MySQL store fails as a PostgreSQL one does: a wrong password or
// database exits 2 (fix the configuration) like PostgreSQL's unknown
// database, an unreachable server exits 3 (a retry may help) with every day
// unverifiable, and the password is never shown.
func TestRunMySQLStoreErrorsExitAsPostgres(t *testing.T) {
	_, raw := mysqltest.New(t)
	const pw = "s3cr3t-Pw"
	user := fmt.Sprintf("recon_%08x", rand.Uint32())
	admin := mysqltest.Admin(t)
	admin.MustExec(fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", user, pw))
	t.Cleanup(func() { admin.Exec(fmt.Sprintf("DROP USER '%s'@'%%'", user)) })
	spell := func(fn func(u *url.URL)) string {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(user, pw)
		fn(u)
		return u.String()
	}
	_, pg := pgtest.New(t)
	pgNoDatabase, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	pgNoDatabase.Path = "/no_such_database_here"
	pgCode := runWithStore(t, pgNoDatabase.String(), pw).code
	if pgCode != exitUsage {
		t.Fatalf("PostgreSQL with an unknown database exits %d, want %d", pgCode, exitUsage)
	}
	tests := []struct {
		name string
		dsn  string
		want int
	}{
		{"wrong_password", spell(func(u *url.URL) { u.User = url.UserPassword(user, "not-"+pw) }), pgCode},
		{"unknown_database", spell(func(u *url.URL) { u.Path = "/no_such_database_here" }), pgCode},
		{"unreachable_port", spell(func(u *url.URL) { u.Host = "127.0.0.1:1" }), exitIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runWithStore(t, tt.dsn, pw)
			if r.code != tt.want {
				t.Errorf("exit %d, want %d\n%s", r.code, tt.want, r.stderr)
			}
		})
	}
}

// runWithStore runs the window of dstWindowClicks against STORE_DSN=dsn,
// checks that a run stopped by the probe (exit 2) wrote no report, that
// any other run's days are all unverifiable, and that pw appears nowhere.
func runWithStore(t *testing.T, dsn, pw string) result {
	t.Helper()
	f := newFixture(t, "sqlite", dstWindowClicks(), dstWindowClicks())
	f.env["STORE_DSN"] = dsn
	r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
	outs := []string{r.stdout, r.stderr}
	if r.code == exitUsage {
		// The probe found a mistake only the configuration can mend:
		// nothing was read or written, so there is no report.
		if paths, _ := filepath.Glob(filepath.Join(f.reportDir, "*", "report.json")); len(paths) != 0 {
			t.Errorf("exit %d wrote a report: %v", r.code, paths)
		}
	} else {
		rep := f.readReport()
		for _, d := range rep.Days {
			if d.Status != "unverifiable" || d.Local != nil {
				t.Errorf("%s: status %s, local %v; want unverifiable", d.Date, d.Status, d.Local)
			}
		}
		b, _ := json.Marshal(rep)
		outs = append(outs, string(b))
	}
	for _, out := range outs {
		if strings.Contains(out, pw) {
			t.Errorf("the store password appears in:\n%s", out)
		}
	}
	return r
}
