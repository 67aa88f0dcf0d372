package history

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/report"
)

// totalsRow is a run's totals as the runs table holds them.
type totalsRow struct {
	RunKey string `db:"run_key"`
	API    *int64 `db:"api_clicks"`
	Local  *int64 `db:"local_clicks"`
	Delta  *int64 `db:"delta_clicks"`
}

func runTotals(t *testing.T, h *History) []totalsRow {
	t.Helper()
	var rows []totalsRow
	if err := h.db.Select(&rows, "SELECT run_key, api_clicks, local_clicks, delta_clicks FROM runs ORDER BY id"); err != nil {
		t.Fatal(err)
	}
	return rows
}

// A run that read no day on both sides has no totals: they are NULL in
// runs, as in report.json, never a 0 that reads as "Elido counted 0".
func TestRecordRunUnknownTotalsAreNull(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		h := migrated(t, dsn)
		ctx := context.Background()
		blind := sampleReport(report.Day{Date: "2026-11-24", Hours: 24, Status: "unverifiable", Severity: "ok", Settled: true, Reason: "Elido: 503"})
		blind.Totals = report.Totals{Unknown: true}
		blind.RunKey = "blind"
		seen := sampleReport(day("2026-11-24", 0, 0, "match", "ok"))
		seen.RunKey = "seen"
		for _, rep := range []report.Report{blind, seen} {
			if err := h.RecordRun(ctx, rep); err != nil {
				t.Fatal(err)
			}
		}
		want := []totalsRow{{RunKey: "blind"}, {RunKey: "seen", API: n(0), Local: n(0), Delta: n(0)}}
		if diff := cmp.Diff(want, runTotals(t, h)); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
	})
}

// Migrating a history recorded by an earlier version keeps every run and
// every day (SQLite rebuilds runs, and run_days must not go with it), and
// turns the 0 totals of runs that read no day into NULL.
// insertRunBefore006 is how the releases before 006_trend recorded a
// run: without its store.
const insertRunBefore006 = `INSERT INTO runs (
    run_key, workspace_id, tz, window_from, window_to, generated_at, status, interrupted,
    api_clicks, local_clicks, delta_clicks, api_summary,
    days, days_match, days_missing, days_surplus, days_provisional, days_unverifiable
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
RETURNING id`

// insertRunDayBefore007 is how the releases before 007_repaired recorded
// a run's day: without the clicks its repair restored.
const insertRunDayBefore007 = `INSERT INTO run_days (run_id, day, hours, api_clicks, local_clicks, delta_clicks, status, severity, settled, reason)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

func TestMigrateUnknownTotalsKeepsRuns(t *testing.T) {
	each(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		h := openUnmigrated(t, dsn)
		defer h.Close()
		ms, err := migrations(h.dialect)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.db.Exec(h.q.migrationsTable); err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.version >= "004" {
				break
			}
			if _, err := h.db.Exec(m.sql); err != nil {
				t.Fatalf("apply %s: %v", m.version, err)
			}
			if _, err := h.db.Exec(h.q.migrationRecord, m.version); err != nil {
				t.Fatal(err)
			}
		}
		// Two runs as the earlier version recorded them: one that read
		// nothing (its totals written as 0), one that read a day.
		for _, r := range []struct {
			key             string
			api, local      int64
			match, unverif  int
			status, dayDate string
		}{
			{"blind", 0, 0, 0, 1, "unverifiable", "2026-11-24"},
			{"seen", 10, 9, 1, 0, "match", "2026-11-24"},
		} {
			var id int64
			if err := h.db.Get(&id, string(sharedFor(h.dialect, []byte(insertRunBefore006))), r.key, "48213", "UTC", "2026-11-24", "2026-11-24", "2026-11-25T03:00:00Z",
				"ok", "", r.api, r.local, r.local-r.api, nil, 1, r.match, 0, 0, 0, r.unverif); err != nil {
				t.Fatal(err)
			}
			if _, err := h.db.Exec(string(sharedFor(h.dialect, []byte(insertRunDayBefore007))), id, r.dayDate, 24.0, nil, nil, nil, r.status, "ok", true, ""); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Migrate(ctx, mustParse(t, dsn, true)); err != nil {
			t.Fatal(err)
		}
		want := []totalsRow{{RunKey: "blind"}, {RunKey: "seen", API: n(10), Local: n(9), Delta: n(-1)}}
		if diff := cmp.Diff(want, runTotals(t, h)); diff != "" {
			t.Errorf("runs after migrating (-want +got):\n%s", diff)
		}
		if got := count(t, h, "run_days"); got != 2 {
			t.Errorf("run_days = %d after migrating, want the 2 recorded before", got)
		}
		// The days still belong to their runs: removing a run removes its day.
		if _, err := h.db.Exec("DELETE FROM runs WHERE run_key = 'blind'"); err != nil {
			t.Fatal(err)
		}
		if got := count(t, h, "run_days"); got != 1 {
			t.Errorf("run_days = %d after removing a run, want 1 (ON DELETE CASCADE kept)", got)
		}
	})
}
