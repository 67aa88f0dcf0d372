package history

import (
	"context"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
)

// A history written by the release before 006_trend (its runs without a store, no
// diagnoses) migrates with nothing lost: its runs are still read, for the
// trend, as runs of the one store the later runs of their workspace and
// zone read, and a run recorded after keeps its diagnoses.
func TestTrendReadsTheRunsOfAnOlderHistory(t *testing.T) {
	each(t, func(t *testing.T, rawDSN string) {
		ctx := context.Background()
		// The history as the release of 001 to 004 left it.
		old, err := open(ctx, mustParse(t, rawDSN, true))
		if err != nil {
			t.Fatal(err)
		}
		ms, err := migrations(old.dialect)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := old.db.ExecContext(ctx, old.q.migrationsTable); err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.version >= "005" {
				continue
			}
			if _, err := old.db.ExecContext(ctx, m.sql); err != nil {
				t.Fatalf("%s: %v", m.version, err)
			}
			if _, err := old.db.ExecContext(ctx, old.q.migrationRecord, m.version); err != nil {
				t.Fatal(err)
			}
		}
		insertOld := sharedFor(old.dialect, []byte(`INSERT INTO runs (run_key, workspace_id, tz, window_from, window_to, generated_at, status,
			api_clicks, local_clicks, delta_clicks, days, days_match, days_missing, days_surplus, days_provisional, days_unverifiable)
			VALUES ($1, '48213', 'Europe/Warsaw', '2026-11-20', '2026-11-20', $2, 'discrepancies', 100, 90, -10, 1, 0, 1, 0, 0, 0) RETURNING id`))
		var id int64
		if err := old.db.GetContext(ctx, &id, string(insertOld), "20261120_20261120_000000000001", "2026-11-21T03:00:00Z"); err != nil {
			t.Fatal(err)
		}
		if _, err := old.db.ExecContext(ctx, string(sharedFor(old.dialect, []byte(insertRunDayBefore007))), id, "2026-11-20", 24.0, 100, 90, -10, "missing", "fail", true, ""); err != nil {
			t.Fatal(err)
		}
		old.Close()

		h := migrated(t, rawDSN)
		rep := sampleReport(day("2026-11-21", 200, 180, reconcile.Missing, reconcile.Fail))
		rep.RunKey, rep.StoreID, rep.GeneratedAt = "20261121_20261121_000000000002", "st_1", time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
		rep.Window.From, rep.Window.To = "2026-11-21", "2026-11-21"
		rep.Diagnoses = []report.Diagnosis{{Date: "2026-11-21", Kind: reconcile.DiagOutage, Clicks: 15}, {Date: "2026-11-21", Kind: reconcile.DiagOutage, Clicks: 3}, {Date: "2026-11-21", Kind: reconcile.DiagUnexplained, Clicks: 2}}
		if err := h.RecordRun(ctx, rep); err != nil {
			t.Fatal(err)
		}
		from, _ := reconcile.ParseDate("2026-11-19")
		to, _ := reconcile.ParseDate("2026-11-22")
		var got []report.Report
		n, err := h.TrendRuns(ctx, "48213", from, to, func(r report.Report) error { got = append(got, r); return nil })
		if err != nil || n != 2 || len(got) != 2 {
			t.Fatalf("TrendRuns: %d runs, %v; want the old run and the new", n, err)
		}
		if g := got[0]; g.StoreID != "st_1" || len(g.Days) != 1 || g.Days[0].Status != reconcile.Missing || *g.Days[0].API != 100 || *g.Days[0].Local != 90 {
			t.Errorf("the run recorded before 006: %+v, want store st_1 and 2026-11-20 missing 100/90", g)
		}
		if g := got[1]; len(g.Diagnoses) != 2 || g.Diagnoses[0].Clicks+g.Diagnoses[1].Clicks != 20 {
			t.Errorf("the new run's diagnoses: %+v, want outage 18 and unexplained 2", g.Diagnoses)
		}
		for _, g := range got[1].Diagnoses {
			if g.Kind == reconcile.DiagOutage && g.Clicks != 18 {
				t.Errorf("outage: %d clicks, want the day's two outages summed, 18", g.Clicks)
			}
		}
	})
}
