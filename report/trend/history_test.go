package trend_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/trend"
)

// openHistory migrates and opens the history at rawDSN.
func openHistory(t *testing.T, rawDSN string) *history.History {
	t.Helper()
	ctx := context.Background()
	mt, err := history.ParseMigrateDSN(rawDSN)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := history.Migrate(ctx, mt); err != nil {
		t.Fatal(err)
	}
	ot, err := history.ParseDSN(rawDSN)
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.Open(ctx, ot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// The trend of the runs a history recorded is the trend of their
// reports: the same verdict of every day, the same sums and causes, on
// SQLite and PostgreSQL.
func TestTrendFromHistoryIsTheTrendOfTheReports(t *testing.T) {
	for name, rawDSN := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "history.db") },
		"postgres": func(t *testing.T) string { _, d := pgtest.New(t); return d },
	} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprint(name, "_seed_", seed), func(t *testing.T) {
				h := openHistory(t, rawDSN(t))
				r := rand.New(rand.NewPCG(seed, 36))
				start, _ := reconcile.ParseDate("2026-02-01")
				reps := randomNights(r, start, 70)
				ctx := context.Background()
				for _, rep := range reps {
					if err := h.RecordRun(ctx, rep); err != nil {
						t.Fatal(err)
					}
				}
				from, to := start.AddDays(5), start.AddDays(60)
				want, _ := trend.New(from, to)
				for _, rep := range reps {
					if err := want.Add(rep); err != nil {
						t.Fatal(err)
					}
				}
				got, _ := trend.New(from, to)
				if _, err := trend.ReadHistory(ctx, h, got, "48213"); err != nil {
					t.Fatal(err)
				}
				ws, gs := want.Series(), got.Series()
				for i := range ws {
					ws[i].Runs = 0 // the history reads only the runs that meet the range
				}
				for i := range gs {
					gs[i].Runs = 0
				}
				if diff := cmp.Diff(ws, gs); diff != "" {
					t.Errorf("trend of the reports (-) and of the history (+):\n%s", diff)
				}
			})
		}
	}
}
