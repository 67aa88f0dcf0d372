package job

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// midnightRun runs the pipeline with raw diagnoses over window, Elido
// holding elido and the store stored (SQLite).
func midnightRun(t *testing.T, window reconcile.Window, elido, stored []elidotest.Click) report.Report {
	t.Helper()
	srv := elidotest.NewServer("48213", "key", elido)
	t.Cleanup(srv.Close)
	client, query := testClient(t, srv.URL(), "key", "48213")
	o := Options{Window: window, WorkspaceID: "48213", RunKey: "test", Query: query,
		Store: dbtest.Parsed(t, store.ParseDSN, sqliteStore(t, stored)), Settle: 2 * time.Hour, Timeout: time.Minute,
		Drilldown: true, DrillMax: 500, Diagnose: DiagnoseRaw, Repair: RepairOff,
		ReportDir: filepath.Join(t.TempDir(), "reports")}
	d := Deps{Elido: client, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now: func() time.Time { return time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC) }, Progress: noProgress{}}
	out, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	return out.Report
}

// midnightClicks are about 90 clicks an hour from 2026-11-09 to
// 2026-11-13 in loc, and the store's rows less those of [from, to).
func midnightClicks(loc *time.Location, from, to time.Time) (elido, stored []elidotest.Click) {
	rng := rand.New(rand.NewPCG(34, 1))
	start := time.Date(2026, 11, 9, 0, 0, 0, 0, loc)
	end := time.Date(2026, 11, 14, 0, 0, 0, 0, loc)
	for t := start; t.Before(end); t = t.Add(time.Duration(rng.Int64N(int64(80*time.Second))) + time.Second) {
		elido = append(elido, elidotest.Click{TS: t.UTC(), LinkID: []string{"lnk_a", "lnk_b", "lnk_c"}[rng.IntN(3)], CountryCode: "PL"})
	}
	stored = slices.DeleteFunc(slices.Clone(elido), func(c elidotest.Click) bool { return !c.TS.Before(from) && c.TS.Before(to) })
	return elido, stored
}

func oneOutage(t *testing.T, rep report.Report, date string) report.Diagnosis {
	t.Helper()
	ds := diagnosesOf(rep, date)
	if len(ds) != 1 || ds[0].Kind != reconcile.DiagOutage {
		t.Fatalf("%s: diagnoses %+v, want one outage", date, ds)
	}
	return ds[0]
}

// An outage from 23:40 to 00:50 is one outage: each day's part names the
// day it continues from or into, and the retry window is judged on the
// whole 70 minutes, not on the 20 before midnight. Where the next day was
// not checked, the part up to midnight says so, and does not blame a
// poller for an outage whose length it cannot know.
func TestOutageAcrossMidnight(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Warsaw")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 11, 10, 23, 40, 0, 0, loc)
	to := time.Date(2026, 11, 11, 0, 50, 0, 0, loc)
	elido, stored := midnightClicks(loc, from, to)
	d10, _ := reconcile.ParseDate("2026-11-10")

	t.Run("both days", func(t *testing.T) {
		rep := midnightRun(t, reconcile.Window{From: d10.AddDays(-1), To: d10.AddDays(2), Loc: loc}, elido, stored)
		before, after := oneOutage(t, rep, "2026-11-10"), oneOutage(t, rep, "2026-11-11")
		if before.ContinuesInto != "2026-11-11" || before.ContinuesFrom != "" || after.ContinuesFrom != "2026-11-10" || after.ContinuesInto != "" {
			t.Errorf("continues: %q→%q and %q→%q, want 2026-11-10 into 2026-11-11", before.ContinuesFrom, before.ContinuesInto, after.ContinuesFrom, after.ContinuesInto)
		}
		for _, d := range []report.Diagnosis{before, after} {
			if strings.Contains(d.Message, "poller") || !strings.Contains(d.Message, "one outage of 1 h") ||
				!strings.Contains(d.Message, "longer than Elido's ~20-minute retry window") {
				t.Errorf("%s: %q: want one outage of over an hour, longer than the retry window", d.Date, d.Message)
			}
		}
		if !strings.Contains(before.Message, "continues into 2026-11-11") || !strings.Contains(after.Message, "continues from 2026-11-10") {
			t.Errorf("messages do not name the other day:\n%s\n%s", before.Message, after.Message)
		}
		if line := report.DiagnosisLine(rep, "2026-11-10"); !strings.Contains(line, "continues into 2026-11-11") {
			t.Errorf("Slack line %q does not say it continues", line)
		}
	})
	t.Run("next day outside the window", func(t *testing.T) {
		rep := midnightRun(t, reconcile.Window{From: d10.AddDays(-1), To: d10, Loc: loc}, elido, stored)
		d := oneOutage(t, rep, "2026-11-10")
		if d.ContinuesInto != "" || strings.Contains(d.Message, "poller") ||
			!strings.Contains(d.Message, "runs up to midnight; 2026-11-11 is outside the run's window") ||
			!strings.Contains(d.Message, "cannot be told") {
			t.Errorf("%q: want it to run up to midnight, the next day not checked, the retry window not judged", d.Message)
		}
	})
	t.Run("day before outside the window", func(t *testing.T) {
		rep := midnightRun(t, reconcile.Window{From: d10.AddDays(1), To: d10.AddDays(2), Loc: loc}, elido, stored)
		d := oneOutage(t, rep, "2026-11-11")
		if d.ContinuesFrom != "" || !strings.Contains(d.Message, "runs from midnight; 2026-11-10 is outside the run's window") ||
			!strings.Contains(d.Message, "longer than Elido's ~20-minute retry window") {
			t.Errorf("%q: want it to run from midnight, the day before not checked", d.Message)
		}
	})
	t.Run("an outage that ends at midnight", func(t *testing.T) {
		// 23:50 to midnight: the next day holds every click, so the
		// 10 minutes are the whole outage, within the retry window.
		elido, stored := midnightClicks(loc, time.Date(2026, 11, 10, 23, 45, 0, 0, loc), time.Date(2026, 11, 11, 0, 0, 0, 0, loc))
		rep := midnightRun(t, reconcile.Window{From: d10, To: d10.AddDays(1), Loc: loc}, elido, stored)
		d := oneOutage(t, rep, "2026-11-10")
		if d.ContinuesInto != "" || !strings.Contains(d.Message, "2026-11-11 holds every click Elido counted") ||
			!strings.Contains(d.Message, "within Elido's ~20-minute retry window") {
			t.Errorf("%q: want it to end at midnight, within the retry window", d.Message)
		}
	})
}
