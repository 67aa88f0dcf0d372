package trend_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/trend"
)

// benchYear records a year of nightly runs over 25 workspaces, 10,000
// runs of three days each with a gap and its diagnoses on one day in
// five, the way RecordRun records them.
func benchYear(b *testing.B, h *history.History) {
	b.Helper()
	ctx := context.Background()
	loc, _ := time.LoadLocation("Europe/Warsaw")
	start, _ := reconcile.ParseDate("2025-12-01")
	r := rand.New(rand.NewPCG(1, 2))
	for night := range 400 {
		for ws := range 25 {
			to := start.AddDays(night)
			from := to.AddDays(-2)
			id := fmt.Sprintf("ws_%02d", ws)
			w := reconcile.Window{From: from, To: to, Loc: loc}
			rep := report.Report{RunKey: report.RunKey(id, w, "s"), WorkspaceID: id, StoreID: "st_" + id,
				Window:      report.Window{From: from.String(), To: to.String(), TZ: loc.String()},
				GeneratedAt: to.AddDays(1).Start(loc).Add(3 * time.Hour), Status: report.StatusOK}
			for d := from; !to.Before(d); d = d.AddDays(1) {
				api := 1000 + r.Int64N(500)
				local := api
				st := reconcile.Match
				if r.IntN(5) == 0 {
					local, st = api-1-r.Int64N(50), reconcile.Missing
					rep.Diagnoses = append(rep.Diagnoses, report.Diagnosis{Date: d.String(), Kind: reconcile.DiagOutage, Clicks: api - local})
				}
				rep.Days = append(rep.Days, report.Day{Date: d.String(), Hours: 24, API: &api, Local: &local, Status: st, Settled: true})
			}
			if err := h.RecordRun(ctx, rep); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkTrendOfAYear computes the trend of a year of nights (365
// days, every workspace: all 10,000 runs' 30,000 days) and of one
// workspace's last 90 nights, from a history of 10,000 runs, on SQLite
// and PostgreSQL. The history is built once per backend (about a minute
// each); RECON_BENCH_HISTORY=PATH keeps the SQLite one there, for a
// whole-run measure of clickrecon trend with /usr/bin/time -v. It
// reports each computation's allocations; the peak memory of a whole run is measured
// on the binary (BENCHMARKS.md).
func BenchmarkTrendOfAYear(b *testing.B) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		var rawDSN string
		if backend == "sqlite" {
			path := os.Getenv("RECON_BENCH_HISTORY")
			if path == "" {
				path = filepath.Join(b.TempDir(), "history.db")
			}
			rawDSN = "sqlite:" + path
		} else {
			_, rawDSN = pgtest.New(b)
		}
		mt, _ := history.ParseMigrateDSN(rawDSN)
		if _, err := history.Migrate(ctx, mt); err != nil {
			b.Fatal(err)
		}
		ot, _ := history.ParseDSN(rawDSN)
		h, err := history.Open(ctx, ot)
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close()
		var have int
		from, _ := reconcile.ParseDate("2000-01-01")
		to, _ := reconcile.ParseDate("2100-01-01")
		if _, err := h.TrendRuns(ctx, "ws_00", from, to, func(report.Report) error { have++; return nil }); err != nil {
			b.Fatal(err)
		}
		if have == 0 {
			benchYear(b, h)
		}
		last, _ := reconcile.ParseDate("2027-01-03")
		for _, c := range []struct {
			name      string
			workspace string
			days      int
		}{{"year_all_workspaces", "", 365}, {"90_nights_one_workspace", "ws_07", 90}} {
			b.Run(backend+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					t, _ := trend.New(last.AddDays(-(c.days - 1)), last)
					n, err := trend.ReadHistory(ctx, h, t, c.workspace)
					if err != nil || n == 0 {
						b.Fatalf("%d runs, %v", n, err)
					}
					_ = t.Series()
				}
			})
		}
	}
}
