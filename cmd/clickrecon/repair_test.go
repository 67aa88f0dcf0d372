package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/mysqltest"
	"github.com/clickrecon/clickrecon/job/runlock"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

func (f *fixture) repair(args ...string) result {
	f.t.Helper()
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), append([]string{"repair"}, args...), envconfig.MapLookuper(f.env), &stdout, &stderr, f.deps())
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	for _, out := range []string{r.stdout, r.stderr} {
		if strings.Contains(out, testKey) {
			f.t.Errorf("the API key appears in the output:\n%s", out)
		}
	}
	return r
}

// repairFile reads a file the repair wrote.
func (f *fixture) repairFile(name string) string {
	f.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(f.reportDir, "repair-*", name))
	if len(paths) != 1 {
		f.t.Fatalf("want one %s, found %v", name, paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func TestRepairPrintsThenApplies(t *testing.T) {
	for _, backend := range []string{"postgres", "sqlite", "mysql"} {
		t.Run(backend, func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, backend, api, lossAndDuplicate(api))
			window := []string{"--from", "2026-10-24", "--to", "2026-10-26"}

			// Print: the plan, its files, and nothing changed.
			r := f.repair(window...)
			if r.code != exitOK {
				t.Fatalf("print: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			// The lost click is 02:30 in the second (CET) 02:00 hour of the 25th.
			for _, want := range []string{
				"1 click to restore on 2026-10-25, 02:00 CET–03:00 CET",
				"2026-10-26: not missing: the store has 1 click more than Elido (surplus is never deleted)",
				"Nothing was changed",
			} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
				}
			}
			if csv := f.repairFile("repair.csv"); !strings.Contains(csv, "2026-10-25,2026-10-25T01:00:00.000Z,2026-10-25T01:30:00.000Z,lnk_a,PL") {
				t.Errorf("repair.csv:\n%s", csv)
			}
			insert := "VALUES ('2026-10-25T01:30:00.000Z', 'lnk_a', 'PL');"
			if backend == "mysql" {
				insert = "SELECT '2026-10-25 01:30:00.000', CONVERT(X'6c6e6b5f61' USING utf8mb4), CONVERT(X'504c' USING utf8mb4) FROM DUAL WHERE @clickrecon_ok = 1;"
			}
			if sql := f.repairFile("repair.sql"); !strings.Contains(sql, insert) {
				t.Errorf("repair.sql:\n%s", sql)
			}
			if r := f.run(window...); r.code != exitOK || !strings.Contains(r.stdout, "missing") {
				t.Errorf("after print, a run should still find the day missing: exit %d\n%s", r.code, r.stdout)
			}

			// Apply.
			f.env["STORE_WRITE_DSN"] = f.env["STORE_DSN"]
			r = f.repair(append(window, "--apply")...)
			if r.code != exitOK || !strings.Contains(r.stdout, "restored 1 click on 2026-10-25, 02:00 CET–03:00 CET; the day now matches") {
				t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if log := f.repairFile("apply.log"); !strings.Contains(log, "intend 2026-10-25 insert 1 clicks") || !strings.Contains(log, "done 2026-10-25 committed 1 clicks") {
				t.Errorf("apply.log:\n%s", log)
			}

			// A second apply finds nothing and inserts nothing.
			r = f.repair(append(window, "--apply")...)
			if r.code != exitOK || !strings.Contains(r.stdout, "0 clicks to restore") || !strings.Contains(r.stdout, "0 clicks inserted") {
				t.Errorf("second apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

func TestRepairApplyWithoutWriteDSNExits2BeforeAnyRequest(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	r := f.repair("--date", "2026-10-25", "--apply")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--apply needs STORE_WRITE_DSN") {
		t.Errorf("exit %d, stderr %q; want 2 naming STORE_WRITE_DSN", r.code, r.stderr)
	}
	if log := f.elido.RequestLog(); len(log) != 0 {
		t.Errorf("requests were made: %v", log)
	}
}

// A store repair cannot read, or a setting it cannot use, exits 2 before
// any request.
func TestRepairBadStoreSettingsExit2(t *testing.T) {
	tests := []struct {
		name, variable, value, want string
	}{
		{"daily_preset", "STORE_PRESET", "daily", "the daily preset has a counter per link and day: it cannot be repaired click by click (docs/repair.md says how"},
		{"unknown_preset", "STORE_PRESET", "hourly", "STORE_PRESET must be events or daily"},
		{"local_timestamp_zone", "STORE_TIMESTAMP_TZ", "Local", "STORE_TIMESTAMP_TZ must name an IANA zone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, "sqlite", api, api)
			f.env[tt.variable] = tt.value
			r := f.repair("--date", "2026-10-25")
			if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, tt.want)
			}
			if log := f.elido.RequestLog(); len(log) != 0 {
				t.Errorf("requests were made: %v", log)
			}
		})
	}
}

// The daily preset's refusal sends the user to docs/repair.md: that file
// must exist and say how to raise a daily counter from Elido's breakdown.
func TestRepairDailyRefusalNamesItsDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "repair.md"))
	if err != nil {
		t.Fatalf("the daily preset's refusal names docs/repair.md: %v", err)
	}
	if !strings.Contains(string(doc), "breakdown/link") || !strings.Contains(string(doc), "GREATEST(click_counts.clicks") {
		t.Error("docs/repair.md does not say how to raise a daily counter from Elido's per-link breakdown")
	}
}

func TestRepairRefusedWhileAnotherHoldsTheLock(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "postgres", api, lossAndDuplicate(api))
	f.env["STORE_WRITE_DSN"] = f.env["STORE_DSN"]
	l, err := runlock.Take(t.Context(), dbtest.Parsed(t, store.ParseDSN, f.env["STORE_DSN"]), testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	r := f.repair("--date", "2026-10-25", "--apply")
	if r.code != exitIncomplete || !strings.Contains(r.stdout, "another run or repair of workspace") {
		t.Errorf("exit %d, stdout %q; want 3", r.code, r.stdout)
	}
	if log := f.elido.RequestLog(); len(log) != 0 {
		t.Errorf("requests were made while the lock was held: %v", log)
	}
}

// run --repair --apply repairs the days the run found missing, and the
// Slack message says what was restored; --repair alone only plans.
func TestRunRepairSaysWhatWasRestored(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "postgres", api, lossAndDuplicate(api))
	var mu sync.Mutex
	var bodies []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer hook.Close()
	f.env["SLACK_WEBHOOK_URL"] = hook.URL + webhookPath
	window := []string{"--from", "2026-10-24", "--to", "2026-10-26"}

	if r := f.run(append(window, "--repair", "--apply")...); r.code != exitUsage || !strings.Contains(r.stderr, "--apply needs STORE_WRITE_DSN") {
		t.Fatalf("--repair --apply without STORE_WRITE_DSN: exit %d\n%s", r.code, r.stderr)
	}
	if r := f.run(append(window, "--apply")...); r.code != exitUsage || !strings.Contains(r.stderr, "add --repair") {
		t.Fatalf("--apply without --repair: exit %d\n%s", r.code, r.stderr)
	}
	if log := f.elido.RequestLog(); len(log) != 0 {
		t.Errorf("requests were made: %v", log)
	}

	if r := f.run(append(window, "--repair", "--dry-run")...); r.code != exitOK {
		t.Fatalf("--repair: exit %d\n%s", r.code, r.stderr)
	}
	if csv := f.repairFile("repair.csv"); !strings.Contains(csv, "2026-10-25T01:30:00.000Z,lnk_a,PL") {
		t.Errorf("repair.csv:\n%s", csv)
	}

	f.env["STORE_WRITE_DSN"] = f.env["STORE_DSN"]
	if r := f.run(append(window, "--repair", "--apply")...); r.code != exitOK {
		t.Fatalf("--repair --apply: exit %d\n%s", r.code, r.stderr)
	}
	mu.Lock()
	got := slices.Clone(bodies)
	mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], "restored 1 click on 2026-10-25, 02:00 CET–03:00 CET; the day now matches") {
		t.Errorf("Slack got %q, want the restored clicks named", got)
	}
	// The next run finds the day repaired.
	if r := f.repair(window...); !strings.Contains(r.stdout, "2026-10-25: not missing: the store has every click Elido counts") {
		t.Errorf("after run --repair --apply, repair says:\n%s", r.stdout)
	}
}

// storeCount is the number of rows of the events table a store DSN names.
func storeCount(t *testing.T, storeDSN string) int {
	t.Helper()
	db, err := dbtest.Parsed(t, store.ParseDSN, storeDSN).Open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Get(&n, "SELECT count(*) FROM clicks"); err != nil {
		t.Fatal(err)
	}
	return n
}

// STORE_WRITE_DSN naming another store (a copy of the store, diverged) is
// refused before any request or write: exit 2, naming both variables and
// saying that a rerun will not help. Neither store changes.
func TestRepairIntoAnotherStoreExits2(t *testing.T) {
	for _, backend := range []string{"postgres", "sqlite", "mysql"} {
		t.Run(backend, func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, backend, api, lossAndDuplicate(api))
			copyDSN := buildStore(t, backend, lossAndDuplicate(api))
			f.env["STORE_WRITE_DSN"] = copyDSN
			before, beforeCopy := storeCount(t, f.env["STORE_DSN"]), storeCount(t, copyDSN)
			r := f.repair("--from", "2026-10-24", "--to", "2026-10-26", "--apply")
			for _, want := range []string{"STORE_WRITE_DSN names another store than STORE_DSN", "a rerun will not help"} {
				if r.code != exitUsage || !strings.Contains(r.stdout, want) || !strings.Contains(r.stderr, want) {
					t.Errorf("exit %d; want 2 and %q on stdout and in the log\n%s\n%s", r.code, want, r.stdout, r.stderr)
				}
			}
			if log := f.elido.RequestLog(); len(log) != 0 {
				t.Errorf("requests were made: %v", log)
			}
			if after, afterCopy := storeCount(t, f.env["STORE_DSN"]), storeCount(t, copyDSN); after != before || afterCopy != beforeCopy {
				t.Errorf("rows: store %d → %d, copy %d → %d; want both unchanged", before, after, beforeCopy, afterCopy)
			}
		})
	}
}

// A STORE_WRITE_DSN role that may insert but not take the repair's lock
// (no UPDATE on clicks) exits 2 before any request, naming STORE_WRITE_DSN
// and the grant, never the read side's STORE_PRESET.
func TestRepairWriteRoleWithoutTheLockGrantExits2(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "postgres", api, lossAndDuplicate(api))
	db, err := sqlx.Open("postgres", f.env["STORE_DSN"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := fmt.Sprintf("clickrecon_insert_only_%d", time.Now().UnixNano()%1e9)
	var schema string
	if err := db.Get(&schema, "SELECT current_schema()"); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"CREATE ROLE " + name + " LOGIN PASSWORD 'pw_insert_only_91'",
		`GRANT USAGE ON SCHEMA "` + schema + `" TO ` + name,
		"GRANT SELECT, INSERT ON clicks TO " + name,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { db.Exec("DROP OWNED BY " + name); db.Exec("DROP ROLE " + name) })
	f.env["STORE_WRITE_DSN"] = strings.Replace(f.env["STORE_DSN"], "postgres@", name+":pw_insert_only_91@", 1)
	r := f.repair("--date", "2026-10-25", "--apply")
	if r.code != exitUsage || !strings.Contains(r.stdout, "STORE_WRITE_DSN's role may not lock table clicks") ||
		!strings.Contains(r.stdout, "GRANT UPDATE ON clicks") || strings.Contains(r.stdout+r.stderr, "STORE_PRESET") {
		t.Errorf("exit %d; want 2 naming STORE_WRITE_DSN and the grant\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "pw_insert_only_91") {
		t.Error("the role's password appears in the output")
	}
	if log := f.elido.RequestLog(); len(log) != 0 {
		t.Errorf("requests were made: %v", log)
	}
}

// A MySQL STORE_WRITE_DSN user that may read clicks but not insert exits 2
// before any request, naming STORE_WRITE_DSN and the grant, never the
// password; nothing is written.
func TestRepairMySQLWriteUserWithoutInsertExits2(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "mysql", api, lossAndDuplicate(api))
	u, err := url.Parse(f.env["STORE_DSN"])
	if err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("crw_%d", time.Now().UnixNano()%1e9)
	admin := mysqltest.Admin(t)
	admin.MustExec(fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY 'pw_select_only_93'", user))
	t.Cleanup(func() { admin.Exec(fmt.Sprintf("DROP USER '%s'@'%%'", user)) })
	admin.MustExec(fmt.Sprintf("GRANT SELECT ON `%s`.clicks TO '%s'@'%%'", strings.TrimPrefix(u.Path, "/"), user))
	u.User = url.UserPassword(user, "pw_select_only_93")
	f.env["STORE_WRITE_DSN"] = u.String()
	before := storeCount(t, f.env["STORE_DSN"])
	r := f.repair("--date", "2026-10-25", "--apply")
	if r.code != exitUsage || !strings.Contains(r.stdout, "STORE_WRITE_DSN's role may not insert into table clicks") ||
		!strings.Contains(r.stdout, "GRANT INSERT ON clicks") {
		t.Errorf("exit %d; want 2 naming STORE_WRITE_DSN and the grant\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "pw_select_only_93") {
		t.Error("the user's password appears in the output")
	}
	if log := f.elido.RequestLog(); len(log) != 0 {
		t.Errorf("requests were made: %v", log)
	}
	if after := storeCount(t, f.env["STORE_DSN"]); after != before {
		t.Errorf("the store went from %d to %d rows; want it unchanged", before, after)
	}
}

// A click PostgreSQL text cannot hold (a NUL byte in its link id) refuses
// its hour only: stdout says which hour and why, the other day is
// restored, and the plan's files are written.
func TestRepairUnwritableClickRefusesItsHourOnly(t *testing.T) {
	local := lossAndDuplicate(dstWindowClicks())
	api := append(dstWindowClicks(), elidotest.Click{TS: utc("2026-10-24T12:30:00Z"), LinkID: "lnk\x00nul", CountryCode: "PL"})
	f := newFixture(t, "postgres", api, local)
	f.env["STORE_WRITE_DSN"] = f.env["STORE_DSN"]
	r := f.repair("--from", "2026-10-24", "--to", "2026-10-26", "--apply")
	for _, want := range []string{
		`not repaired: 2026-10-24, 14:00 CEST–15:00 CEST: its click at 2026-10-24T12:30:00.000Z cannot be written: its link id "lnk\x00nul" holds a NUL byte`,
		"restored 1 click on 2026-10-25, 02:00 CET–03:00 CET; the day now matches",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.code != exitGaps {
		t.Errorf("exit %d, want 1 (an hour refused)\n%s", r.code, r.stderr)
	}
	if sql := f.repairFile("repair.sql"); !strings.Contains(sql, "'2026-10-25T01:30:00.000Z', 'lnk_a', 'PL'") || strings.Contains(sql, "nul") {
		t.Errorf("repair.sql:\n%s", sql)
	}
}

// A store whose clicks table is gone fails repair's probe, as it fails
// run's: exit 2 naming the preset, before any request to Elido.
func TestRepairOnAStoreWithoutItsTableExits2BeforeAnyRequest(t *testing.T) {
	for _, apply := range []bool{false, true} {
		t.Run(fmt.Sprintf("apply_%v", apply), func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
			archiveClicks(t, f.env["STORE_DSN"])
			args := []string{"--date", "2026-10-25"}
			if apply {
				f.env["STORE_WRITE_DSN"] = f.env["STORE_DSN"]
				args = append(args, "--apply")
			}
			r := f.repair(args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "STORE_PRESET=events does not fit the database at STORE_DSN") {
				t.Errorf("exit %d, want 2 naming STORE_PRESET:\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if log := f.elido.RequestLog(); len(log) != 0 {
				t.Errorf("Elido was asked %v by a repair its probe stopped", log)
			}
		})
	}
}

// archiveClicks renames a SQLite store's clicks table, as a store whose
// table was moved away overnight.
func archiveClicks(t *testing.T, storeDSN string) {
	t.Helper()
	db, err := sqlx.Open("sqlite", strings.TrimPrefix(storeDSN, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`ALTER TABLE clicks RENAME TO clicks_archived`); err != nil {
		t.Fatal(err)
	}
}
