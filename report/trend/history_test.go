package trend_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/history/historytest"
	"github.com/clickrecon/clickrecon/report/trend"
)

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
				h := historytest.Open(t, rawDSN(t))
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

// From the history, each alerted day says when Slack was first told of it
// (the alerts' alerted_at) and, once told healed, when; the series sums
// up the time to alert.
func TestTrendFromHistoryHasTheAlertTimes(t *testing.T) {
	ctx := context.Background()
	h := historytest.Open(t, "sqlite:"+filepath.Join(t.TempDir(), "history.db"))
	day, m, a := recordGapRun(t, h)
	before := time.Now().Add(-time.Second)
	if err := h.SaveAlerts(ctx, m, []history.Alert{a}); err != nil {
		t.Fatal(err)
	}
	tr, _ := trend.New(day, day)
	if _, err := trend.ReadHistory(ctx, h, tr, "48213"); err != nil {
		t.Fatal(err)
	}
	s := tr.Series()
	if len(s) != 1 || s[0].Days[0].Alerted == nil || s[0].Days[0].Alerted.Before(before.Truncate(time.Second)) || s[0].Days[0].HealTold != nil {
		t.Fatalf("the alerted day: %+v", s)
	}
	if s[0].ToAlert.Days != 1 || s[0].ToAlert.WorstDate != day.String() {
		t.Errorf("to_alert: %+v, want the one day", s[0].ToAlert)
	}
	a.Healed, a.Local, a.Delta = true, 100, 0
	if err := h.SaveAlerts(ctx, m, []history.Alert{a}); err != nil {
		t.Fatal(err)
	}
	tr, _ = trend.New(day, day)
	if _, err := trend.ReadHistory(ctx, h, tr, "48213"); err != nil {
		t.Fatal(err)
	}
	if d := tr.Series()[0].Days[0]; d.HealTold == nil || d.HealTold.Before(*d.Alerted) {
		t.Errorf("the day told healed: %+v", d)
	}
}

// A concurrent writer: a run's alert saved while the trend reads the
// history is read whole or not at all. The read is one moment (one
// read-only transaction, a snapshot on PostgreSQL): the alert saved while
// its days were read is not among its alerts; the write is never refused
// for it (on SQLite it waits for the read), and the next read has it.
func TestTrendFromHistoryIsReadAtOneMoment(t *testing.T) {
	for name, rawDSN := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "history.db") },
		"postgres": func(t *testing.T) string { _, d := pgtest.New(t); return d },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			h := historytest.Open(t, rawDSN(t))
			day, m, a := recordGapRun(t, h)
			saved := make(chan error, 1)
			runs, alerts, err := h.ReadTrend(ctx, "48213", day, day, func(report.Report) error {
				go func() { saved <- h.SaveAlerts(ctx, m, []history.Alert{a}) }()
				select { // PostgreSQL saves it now; SQLite once the read is done
				case err := <-saved:
					saved <- err
				case <-time.After(2 * time.Second):
				}
				return nil
			})
			if err != nil || runs != 1 {
				t.Fatalf("ReadTrend: %d runs, %v", runs, err)
			}
			if len(alerts) != 0 {
				t.Errorf("the read has the alert saved while it read: %+v", alerts)
			}
			if err := <-saved; err != nil {
				t.Fatalf("the alert saved during the read: %v", err)
			}
			if _, alerts, err := h.ReadTrend(ctx, "48213", day, day, func(report.Report) error { return nil }); err != nil || len(alerts) != 1 {
				t.Errorf("the next read: alerts %+v, %v; want the one saved", alerts, err)
			}
		})
	}
}

// recordGapRun records in h a run of workspace 48213 whose one day,
// 2026-11-20, lacks 20 of Elido's 100 clicks, and returns the day, and
// the alert of it and its message, not yet saved.
func recordGapRun(t *testing.T, h *history.History) (reconcile.Date, history.Message, history.Alert) {
	t.Helper()
	ctx := context.Background()
	loc, _ := time.LoadLocation("Europe/Warsaw")
	day, _ := reconcile.ParseDate("2026-11-20")
	api, local := int64(100), int64(80)
	rep := report.Report{RunKey: report.RunKey("48213", reconcile.Window{From: day, To: day, Loc: loc}, "s"), WorkspaceID: "48213",
		StoreID: "st_1", Window: report.Window{From: day.String(), To: day.String(), TZ: loc.String()},
		GeneratedAt: time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC),
		Days:        []report.Day{{Date: day.String(), API: &api, Local: &local, Status: reconcile.Missing, Settled: true}}}
	if err := h.RecordRun(ctx, rep); err != nil {
		t.Fatal(err)
	}
	m := history.Message{RunKey: rep.RunKey, WorkspaceID: "48213", StoreID: "st_1", TZ: loc.String(), Kind: history.KindAlert,
		Action: history.ActionPosted, Transport: history.TransportWebhook}
	a := history.Alert{Date: day.String(), Status: reconcile.Missing, Severity: reconcile.Fail, API: 100, Local: 80, Delta: -20,
		Transport: history.TransportWebhook, From: day.String(), To: day.String(), RunKey: rep.RunKey}
	return day, m, a
}
