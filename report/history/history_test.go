package history

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
)

// backend is a real database the history tests run against.
type backend struct {
	name string
	// dsn returns the DSN of a fresh, empty database.
	dsn func(t *testing.T) string
}

func backends() []backend {
	return []backend{
		{name: "sqlite", dsn: func(t *testing.T) string {
			return "sqlite:" + filepath.Join(t.TempDir(), "history.db")
		}},
		{name: "postgres", dsn: func(t *testing.T) string {
			_, dsn := pgtest.New(t)
			return dsn
		}},
	}
}

// each runs test once per backend.
func each(t *testing.T, test func(t *testing.T, dsn string)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { test(t, b.dsn(t)) })
	}
}

// migrated returns an open History on a fresh, migrated database.
func migrated(t *testing.T, dsn string) *History {
	t.Helper()
	ctx := context.Background()
	if _, err := Migrate(ctx, mustParse(t, dsn, true)); err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, mustParse(t, dsn, false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func n(v int64) *int64 { return &v }

// day builds a settled day with both counts known.
func day(date string, api, local int64, status reconcile.Status, severity reconcile.Severity) report.Day {
	return report.Day{Date: date, Hours: 24, API: n(api), Local: n(local), Delta: n(local - api),
		Status: status, Severity: severity, Settled: true}
}

func sampleReport(days ...report.Day) report.Report {
	r := report.Report{
		SchemaVersion: 1,
		RunKey:        "20261124_20261126_0123456789ab",
		WorkspaceID:   "48213",
		Window:        report.Window{From: days[0].Date, To: days[len(days)-1].Date, TZ: "Europe/Warsaw"},
		GeneratedAt:   time.Date(2026, 11, 27, 3, 0, 12, 0, time.UTC),
		Status:        report.StatusOK,
	}
	for _, d := range days {
		r.Days = append(r.Days, d)
		r.Coverage.Days++
		if d.API != nil && d.Local != nil {
			r.Totals.API += *d.API
			r.Totals.Local += *d.Local
		}
		switch d.Status {
		case "match":
			r.Coverage.Match++
		case "missing":
			r.Coverage.Missing++
			r.Status = report.StatusDiscrepancies
		case "surplus":
			r.Coverage.Surplus++
			r.Status = report.StatusDiscrepancies
		case "provisional":
			r.Coverage.Provisional++
		case "unverifiable":
			r.Coverage.Unverifiable++
		}
	}
	r.Totals.Delta = r.Totals.Local - r.Totals.API
	return r
}

func TestMigrateIsIdempotent(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		first, err := Migrate(ctx, mustParse(t, dsn, true))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"001_history", "002_outbox", "003_notices", "004_unknown_totals", "005_outbox_outcomes", "006_trend", "007_repaired", "008_outbox_sent", "009_store_ids"}, first); diff != "" {
			t.Errorf("first Migrate applied (-want +got):\n%s", diff)
		}
		second, err := Migrate(ctx, mustParse(t, dsn, true))
		if err != nil {
			t.Fatalf("second Migrate: %v", err)
		}
		if len(second) != 0 {
			t.Errorf("second Migrate applied %v, want nothing", second)
		}
		h, err := Open(ctx, mustParse(t, dsn, false))
		if err != nil {
			t.Fatalf("Open after Migrate: %v", err)
		}
		h.Close()
	})
}

// Two jobs starting at once (a CronJob's init container and a backfill's,
// say) may both run migrate: one applies, the others wait and find
// nothing to do.
func TestMigrateConcurrently(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		migrateConcurrently(t, dsn)
	})
}

// The upgrade path: schema_migrations already exists, so its CREATE TABLE
// IF NOT EXISTS takes no lock of its own and every Migrate reads the same
// pending versions. Without the runner's lock they would all apply them,
// and all but one fail on "relation already exists".
func TestMigrateConcurrentlyOverAnExistingMigrationsTable(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := openUnmigrated(t, dsn)
		if _, err := h.db.Exec(h.q.migrationsTable); err != nil {
			t.Fatal(err)
		}
		h.Close()
		migrateConcurrently(t, dsn)
	})
}

// migrateConcurrently runs several Migrate calls on dsn at once and checks
// that every call succeeds, that each migration was applied by exactly one
// of them and recorded once, and that the history then opens.
func migrateConcurrently(t *testing.T, dsn string) {
	t.Helper()
	const runs = 6
	var wg sync.WaitGroup
	results := make([][]string, runs)
	errs := make([]error, runs)
	start := make(chan struct{})
	target := mustParse(t, dsn, true)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = Migrate(context.Background(), target)
		}()
	}
	close(start)
	wg.Wait()
	var all []string
	for i := range runs {
		if errs[i] != nil {
			t.Errorf("Migrate %d: %v", i, errs[i])
		}
		all = append(all, results[i]...)
	}
	h := openUnmigrated(t, dsn)
	defer h.Close()
	ms, err := migrations(h.dialect)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range ms {
		want = append(want, m.version)
	}
	slices.Sort(all)
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("migrations applied over all concurrent runs (-want +got):\n%s", diff)
	}
	var recorded []string
	if err := h.db.Select(&recorded, "SELECT version FROM schema_migrations ORDER BY version"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, recorded); diff != "" {
		t.Errorf("schema_migrations (-want +got):\n%s", diff)
	}
	if err := h.checkMigrated(context.Background()); err != nil {
		t.Errorf("after concurrent Migrate: %v", err)
	}
}

// openUnmigrated opens dsn without checking its tables.
func openUnmigrated(t *testing.T, rawDSN string) *History {
	t.Helper()
	h, err := open(context.Background(), mustParse(t, rawDSN, true))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestOpenRefusesAnUnmigratedDatabase(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		if strings.HasPrefix(dsn, "sqlite:") {
			// Open never creates a file: an empty one stands in for a
			// database nobody migrated.
			if _, err := ParseDSN(dsn); err == nil || !strings.Contains(err.Error(), "clickrecon migrate") {
				t.Errorf("HISTORY_DSN of a missing file: err = %v, want one that says to run clickrecon migrate", err)
			}
			openUnmigrated(t, dsn).Close()
		}
		_, err := Open(context.Background(), mustParse(t, dsn, false))
		if !errors.Is(err, ErrNotMigrated) {
			t.Fatalf("Open of an unmigrated database: err = %v, want ErrNotMigrated", err)
		}
		if !strings.Contains(err.Error(), "run clickrecon migrate") {
			t.Errorf("error %q does not say what to do", err)
		}
	})
}

// mustParse reads rawDSN as HISTORY_DSN is read for Migrate (create) or
// for Open, and fails t when it does not parse.
func mustParse(t *testing.T, rawDSN string, create bool) dsn.Target {
	t.Helper()
	parse := ParseDSN
	if create {
		parse = ParseMigrateDSN
	}
	tg, err := parse(rawDSN)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestErrorsHideThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, dsn := range []string{
		"postgres://recon:s3cr%23t-pw@127.0.0.1:1/history?sslmode=disable",
		"postgres://recon@127.0.0.1:1/history?sslmode=disable&password=s3cr%23t-pw",
	} {
		for name, call := range map[string]func() error{
			"Open":    func() error { _, err := Open(ctx, mustParse(t, dsn, false)); return err },
			"Migrate": func() error { _, err := Migrate(ctx, mustParse(t, dsn, true)); return err },
		} {
			err := call()
			if err == nil {
				t.Fatalf("%s of an unreachable server succeeded", name)
			}
			if strings.Contains(err.Error(), "s3cr") {
				t.Errorf("%s error shows the password: %v", name, err)
			}
		}
	}
	if _, err := ParseDSN("mysql://x"); err == nil || !strings.Contains(err.Error(), "sqlite:PATH") {
		t.Errorf("an unsupported HISTORY_DSN: %v", err)
	}
}

func count(t *testing.T, h *History, table string) int {
	t.Helper()
	var c int
	if err := h.db.Get(&c, "SELECT count(*) FROM "+table); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRecordRun(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		ctx := context.Background()
		rep := sampleReport(
			day("2026-11-24", 1710, 1709, "match", "ok"),
			day("2026-11-25", 1200, 1195, "missing", "warn"),
			report.Day{Date: "2026-11-26", Hours: 24, Local: n(800), Status: "unverifiable", Severity: "ok", Settled: true,
				Reason: "Elido: 503 after 5 attempts"},
		)
		rep.Totals.APISummary = n(2910)
		if err := h.RecordRun(ctx, rep); err != nil {
			t.Fatal(err)
		}
		if got := count(t, h, "runs"); got != 1 {
			t.Errorf("runs = %d, want 1", got)
		}
		type row struct {
			Status string `db:"status"`
			API    *int64 `db:"api_clicks"`
			Delta  *int64 `db:"delta_clicks"`
			Reason string `db:"reason"`
		}
		var rows []row
		if err := h.db.Select(&rows, "SELECT status, api_clicks, delta_clicks, reason FROM run_days ORDER BY day"); err != nil {
			t.Fatal(err)
		}
		want := []row{
			{Status: "match", API: n(1710), Delta: n(-1)},
			{Status: "missing", API: n(1200), Delta: n(-5)},
			{Status: "unverifiable", Reason: "Elido: 503 after 5 attempts"},
		}
		if diff := cmp.Diff(want, rows); diff != "" {
			t.Errorf("run_days (-want +got):\n%s", diff)
		}
	})
}

// A run whose days cannot all be written leaves no trace: not its run row,
// not the days written before the failure.
func TestRecordRunIsAllOrNothing(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		rep := sampleReport(
			day("2026-11-24", 10, 10, "match", "ok"),
			day("2026-11-25", 10, 10, "match", "ok"),
			day("2026-11-25", 10, 10, "match", "ok"), // the same day twice: the primary key refuses it
		)
		err := h.RecordRun(context.Background(), rep)
		if err == nil {
			t.Fatal("RecordRun of a report with a repeated day succeeded")
		}
		if !strings.Contains(err.Error(), "2026-11-25") {
			t.Errorf("error %q does not name the day", err)
		}
		if got := count(t, h, "runs"); got != 0 {
			t.Errorf("runs = %d after a failed RecordRun, want 0", got)
		}
		if got := count(t, h, "run_days"); got != 0 {
			t.Errorf("run_days = %d after a failed RecordRun, want 0", got)
		}
	})
}

func TestLastCounts(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		ctx := context.Background()
		provisional := day("2026-11-26", 40, 40, "provisional", "ok")
		provisional.Settled = false
		first := sampleReport(
			day("2026-11-24", 1710, 1709, "match", "ok"),
			day("2026-11-25", 1205, 1200, "missing", "warn"),
			provisional,
		)
		first.RunKey = "20261124_20261126_aaaaaaaaaaaa"
		if err := h.RecordRun(ctx, first); err != nil {
			t.Fatal(err)
		}
		// The same days read by another workspace, and in another zone:
		// neither is an earlier run of this one.
		other := sampleReport(day("2026-11-25", 1, 1, "match", "ok"))
		other.WorkspaceID = "99999"
		if err := h.RecordRun(ctx, other); err != nil {
			t.Fatal(err)
		}
		otherZone := sampleReport(day("2026-11-25", 2, 2, "match", "ok"))
		otherZone.Window.TZ = "UTC"
		if err := h.RecordRun(ctx, otherZone); err != nil {
			t.Fatal(err)
		}

		from, _ := reconcile.ParseDate("2026-11-24")
		to, _ := reconcile.ParseDate("2026-11-27")
		d24, d25 := from, from.AddDays(1)
		got, err := h.LastCounts(ctx, first.WorkspaceID, first.Window.TZ, from, to)
		if err != nil {
			t.Fatal(err)
		}
		// 2026-11-26 was provisional: a count still growing is late data,
		// not a revision, and is left out.
		want := map[reconcile.Date]reconcile.Recorded{
			d24: {Clicks: 1710, RunKey: first.RunKey, At: "2026-11-27T03:00:12Z"},
			d25: {Clicks: 1205, RunKey: first.RunKey, At: "2026-11-27T03:00:12Z"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("LastCounts (-want +got):\n%s", diff)
		}

		// Once a later run is recorded, its counts are the ones compared with.
		now := sampleReport(
			day("2026-11-24", 1710, 1709, "match", "ok"),
			day("2026-11-25", 1200, 1200, "match", "ok"),
		)
		now.RunKey = "20261124_20261125_bbbbbbbbbbbb"
		if err := h.RecordRun(ctx, now); err != nil {
			t.Fatal(err)
		}
		got, err = h.LastCounts(ctx, first.WorkspaceID, first.Window.TZ, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if got[d25].Clicks != 1200 || got[d25].RunKey != now.RunKey {
			t.Errorf("LastCounts after a later run = %+v, want its 1,200", got[d25])
		}
	})
}

func TestSaveAlerts(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		ctx := context.Background()
		msg := Message{RunKey: "rk1", WorkspaceID: "48213", StoreID: "st_a", TZ: "Europe/Warsaw", Kind: KindAlert,
			Action: ActionPosted, Transport: TransportBot, Channel: "C0ALERTS", TS: "1700000000.000100"}
		a := Alert{Date: "2026-11-25", Status: "missing", Severity: "warn", API: 1200, Local: 1195, Delta: -5,
			Transport: TransportBot, Channel: "C0ALERTS", TS: "1700000000.000100",
			From: "2026-11-24", To: "2026-11-26", RunKey: "rk1"}
		b := a
		b.Date, b.Status, b.API, b.Local, b.Delta = "2026-11-26", "surplus", 900, 907, 7
		if err := h.SaveAlerts(ctx, msg, []Alert{a, b}); err != nil {
			t.Fatal(err)
		}
		got, err := h.Alerts(ctx, Scope{WorkspaceID: "48213", StoreID: "st_a", TZ: "Europe/Warsaw"}, "2026-11-20", "2026-11-25")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]Alert{"2026-11-25": a}, got); diff != "" {
			t.Errorf("Alerts (-want +got):\n%s", diff)
		}

		// The day heals: the row keeps the alerted counts and is marked.
		healed := a
		healed.Healed, healed.RunKey = true, "rk2"
		if err := h.SaveAlerts(ctx, Message{RunKey: "rk2", WorkspaceID: "48213", StoreID: "st_a", TZ: "Europe/Warsaw", Kind: KindHealed,
			Action: ActionUpdated, Transport: TransportBot, Channel: "C0ALERTS", TS: "1700000000.000100"}, []Alert{healed}); err != nil {
			t.Fatal(err)
		}
		ofMessage, err := h.MessageAlerts(ctx, Scope{WorkspaceID: "48213", StoreID: "st_a", TZ: "Europe/Warsaw"}, "C0ALERTS", "1700000000.000100")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]Alert{healed, b}, ofMessage); diff != "" {
			t.Errorf("MessageAlerts (-want +got):\n%s", diff)
		}
		if got := count(t, h, "slack_messages"); got != 2 {
			t.Errorf("slack_messages = %d, want 2", got)
		}
		// Another zone, or another store of the workspace, is another key.
		for _, key := range [][2]string{{"st_a", "UTC"}, {"st_b", "Europe/Warsaw"}} {
			other, err := h.Alerts(ctx, Scope{WorkspaceID: "48213", StoreID: key[0], TZ: key[1]}, "2026-11-20", "2026-11-30")
			if err != nil {
				t.Fatal(err)
			}
			if len(other) != 0 {
				t.Errorf("alerts of store %s in %s: %v", key[0], key[1], other)
			}
		}
	})
}

// A message is recorded with all its days or not at all.
func TestSaveAlertsIsAllOrNothing(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		good := Alert{Date: "2026-11-25", Status: "missing", Severity: "warn", API: 10, Local: 5, Delta: -5,
			Transport: TransportWebhook, From: "2026-11-25", To: "2026-11-25", RunKey: "rk"}
		bad := good
		bad.Date, bad.Status = "2026-11-26", "match" // only gaps are alerted: the CHECK refuses it
		err := h.SaveAlerts(context.Background(), Message{RunKey: "rk", WorkspaceID: "w", TZ: "UTC", Kind: KindAlert,
			Action: ActionPosted, Transport: TransportWebhook}, []Alert{good, bad})
		if err == nil {
			t.Fatal("SaveAlerts with an invalid row succeeded")
		}
		if got := count(t, h, "alerts") + count(t, h, "slack_messages"); got != 0 {
			t.Errorf("%d rows left after a failed SaveAlerts, want 0", got)
		}
	})
}

// TestErrorsKeepTheirWords: the server's own words about a role that does
// not exist stay readable whatever the password is, even one that is a
// word of the message; the DSN's password is still hidden where it
// stands.
func TestErrorsKeepTheirWords(t *testing.T) {
	_, base := pgtest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, pw := range []string{"role", "x", "does", "exist"} {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword("nc_nosuchuser", pw)
		_, err = Open(ctx, mustParse(t, u.String(), false))
		if err == nil {
			t.Fatalf("password %q: a role that does not exist opened the history", pw)
		}
		if !strings.Contains(err.Error(), `role "nc_nosuchuser" does not exist`) {
			t.Errorf("password %q: the server's words were changed: %v", pw, err)
		}
		if strings.Contains(err.Error(), ":"+pw+"@") {
			t.Errorf("password %q: the DSN's password shows: %v", pw, err)
		}
	}
}
