package trend_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/report/trend"
)

func ptr(v int64) *int64 { return &v }

// randomNights is a random sequence of nightly runs over one workspace: each
// night checks the three days before it, some nights are missed, some
// runs could not read Elido (their days unverifiable), some days are not
// settled yet, gaps come and heal, and now and then a backfill re-checks
// a longer window, and some runs repair a missing day (their report has
// the day's counts from before, and what the repair restored). Every
// run's report is what the test compares against.
func randomNights(r *rand.Rand, start reconcile.Date, nights int) []report.Report {
	loc, _ := time.LoadLocation("Europe/Warsaw")
	var reps []report.Report
	truth := map[reconcile.Date]int64{} // Elido's clicks of a day
	lost := map[reconcile.Date]int64{}  // what the store lacks of it, for now
	for n := range nights {
		night := start.AddDays(n)
		if r.IntN(10) == 0 {
			continue // a night without a run
		}
		from, to := night.AddDays(-3), night.AddDays(-1)
		if r.IntN(15) == 0 {
			from = night.AddDays(-3 - r.IntN(20)) // a backfill
		}
		down := r.IntN(8) == 0
		at := night.Start(loc).Add(3*time.Hour + time.Duration(r.IntN(3600))*time.Second).UTC()
		w := reconcile.Window{From: from, To: to, Loc: loc}
		rep := report.Report{SchemaVersion: 1, Tool: report.Tool, RunKey: report.RunKey("48213", w, "store"),
			WorkspaceID: "48213", StoreID: "st_1", Window: report.Window{From: from.String(), To: to.String(), TZ: loc.String()},
			GeneratedAt: at, Links: []report.Link{}, Findings: []report.Finding{}, Countries: []report.Country{}, Diagnoses: []report.Diagnosis{}}
		for d := from; !to.Before(d); d = d.AddDays(1) {
			if _, ok := truth[d]; !ok {
				truth[d] = 500 + r.Int64N(1000)
				if r.IntN(4) == 0 {
					lost[d] = 1 + r.Int64N(200)
				}
				if r.IntN(12) == 0 {
					lost[d] = -(1 + r.Int64N(50)) // duplicates
				}
			}
			if lost[d] != 0 && r.IntN(6) == 0 {
				lost[d] = 0 // a late receiver healed it, or a repair
			}
			api, local := truth[d], truth[d]-lost[d]
			day := report.Day{Date: d.String(), Hours: 24, API: ptr(api), Local: ptr(local), Delta: ptr(local - api), Settled: true}
			switch {
			case down:
				day.API, day.Delta, day.Status, day.Reason = nil, nil, reconcile.Unverifiable, "Elido: 503"
			case d == to && r.IntN(3) == 0:
				day.Status, day.Settled = reconcile.Provisional, false
			case local < api:
				day.Status = reconcile.Missing
				if r.IntN(5) == 0 {
					day.Repaired = api - local
					lost[d] = 0 // from the next run on
				}
				kinds := []string{reconcile.DiagOutage, reconcile.DiagSteadyLeak, reconcile.DiagBusy, reconcile.DiagUnexplained}
				rep.Diagnoses = append(rep.Diagnoses, report.Diagnosis{Date: d.String(), Kind: kinds[r.IntN(len(kinds))], Clicks: api - local})
			case local > api:
				day.Status = reconcile.Surplus
				rep.Diagnoses = append(rep.Diagnoses, report.Diagnosis{Date: d.String(), Kind: reconcile.DiagDuplicates, Clicks: local - api})
			default:
				day.Status = reconcile.Match
			}
			rep.Days = append(rep.Days, day)
		}
		if down && n%2 == 0 {
			rep.StoreID = "" // its store not identified either: one of the workspace's one store
		}
		reps = append(reps, rep)
	}
	return reps
}

// A run whose store was not identified counts as one of the one store its
// workspace read in its zone; beside two stores it stays a series of its
// own, since it could be either's.
func TestRunsOfAStoreNotIdentified(t *testing.T) {
	day, _ := reconcile.ParseDate("2026-03-02")
	at := time.Date(2026, 3, 3, 3, 0, 0, 0, time.UTC)
	run := func(store string, status reconcile.Status, at time.Time) report.Report {
		return report.Report{RunKey: "rk_" + store + "_" + string(status), WorkspaceID: "48213", StoreID: store, GeneratedAt: at,
			Window: report.Window{From: day.String(), To: day.String(), TZ: "Europe/Warsaw"},
			Days:   []report.Day{{Date: day.String(), Status: status, API: ptr(100), Local: ptr(90)}}}
	}
	series := func(reps ...report.Report) []trend.Series {
		tr, _ := trend.New(day, day)
		for _, r := range reps {
			if err := tr.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		return tr.Series()
	}
	one := series(run("st_1", reconcile.Missing, at), run("", reconcile.Unverifiable, at.Add(24*time.Hour)))
	if len(one) != 1 || one[0].StoreID != "st_1" || one[0].Runs != 2 || one[0].Days[0].Checks != 2 || one[0].Days[0].Status != reconcile.Missing {
		t.Errorf("beside one store: %+v; want its one series, of both runs, the day missing", one)
	}
	two := series(run("st_1", reconcile.Missing, at), run("st_2", reconcile.Match, at), run("", reconcile.Unverifiable, at))
	if len(two) != 3 {
		t.Errorf("beside two stores: %d series, want 3 (the run of no store apart)", len(two))
	}
}

// claims is how strongly a day's status speaks for it, as the contract
// orders verdicts: a comparison of both sides over a day not settled over
// a day not compared (any other status: 0).
var claims = map[reconcile.Status]int{reconcile.Match: 2, reconcile.Missing: 2, reconcile.Surplus: 2, reconcile.Provisional: 1}

func claim(s reconcile.Status) int { return claims[s] }

// Over random histories written to a real report folder, every day of
// the trend is the verdict of one run's report, the latest that compared
// the day (or, when none did, the latest that held it), its numbers are
// that report's, every week, month and the total add up its days, and
// the order the reports come in changes nothing.
func TestTrendIsTheLatestVerdictOfTheReports(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint("seed_", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 34))
			start, _ := reconcile.ParseDate("2026-01-01")
			reps := randomNights(r, start, 60+r.IntN(60))
			from, to := start.AddDays(r.IntN(20)), start.AddDays(40+r.IntN(60))
			tr, err := trend.New(from, to)
			if err != nil {
				t.Fatal(err)
			}
			if seed < 2 {
				// Through a real report folder, as clickrecon trend reads it.
				dir := t.TempDir()
				for _, rep := range reps {
					if _, err := storage.Write(dir, rep); err != nil {
						t.Fatal(err)
					}
				}
				d, err := storage.Open(context.Background(), dir)
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				if _, err := trend.Read(context.Background(), d, tr, "48213"); err != nil {
					t.Fatal(err)
				}
			} else {
				for _, rep := range reps {
					if err := tr.Add(rep); err != nil {
						t.Fatal(err)
					}
				}
			}
			got := tr.Series()
			if len(got) != 1 {
				t.Fatalf("%d series, want 1", len(got))
			}
			s := got[0]
			check(t, s, reps, from, to)

			// The reports in reverse, added directly: the same trend.
			again, _ := trend.New(from, to)
			for i := len(reps) - 1; i >= 0; i-- {
				if err := again.Add(reps[i]); err != nil {
					t.Fatal(err)
				}
			}
			want := again.Series()
			want[0].Runs = s.Runs // Read reads only the reports that meet the range
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("reports added in another order give another trend (-reversed +read):\n%s", diff)
			}
		})
	}
}

// check compares s with what the reports say, computed from them alone.
func check(t *testing.T, s trend.Series, reps []report.Report, from, to reconcile.Date) {
	t.Helper()
	byKey := map[string]report.Report{}
	for _, rep := range reps {
		byKey[rep.RunKey] = rep
	}
	type entry struct {
		rep report.Report
		day report.Day
	}
	holding := map[string][]entry{}
	for _, rep := range reps {
		for _, d := range rep.Days {
			holding[d.Date] = append(holding[d.Date], entry{rep, d})
		}
	}
	weeks := map[string]*trend.Period{}
	var total trend.Period
	i := 0
	for d := from; !to.Before(d); d = d.AddDays(1) {
		if i >= len(s.Days) {
			t.Fatalf("the trend ends at %d days, before %s", len(s.Days), d)
		}
		day := s.Days[i]
		i++
		if day.Date != d.String() {
			t.Fatalf("day %d is %s, want %s", i, day.Date, d)
		}
		hs := holding[day.Date]
		var restored int64
		var repaired time.Time
		for _, h := range hs {
			if h.day.Repaired > 0 {
				restored += h.day.Repaired
				if repaired.IsZero() || h.rep.GeneratedAt.Before(repaired) {
					repaired = h.rep.GeneratedAt
				}
			}
		}
		if day.Restored != restored || !orZero(day.Repaired).Equal(repaired) {
			t.Errorf("%s: %d restored, first at %v; the reports restored %d, first at %v", day.Date, day.Restored, orZero(day.Repaired), restored, repaired)
		}
		if day.Checks != len(hs) {
			t.Errorf("%s: %d checks, but %d reports hold the day", day.Date, day.Checks, len(hs))
		}
		if !day.Checked {
			if len(hs) > 0 {
				t.Errorf("%s: unchecked, but %d reports hold it", day.Date, len(hs))
			}
		} else {
			rep, ok := byKey[day.RunKey]
			if !ok {
				t.Fatalf("%s: verdict of run %s, which wrote no report", day.Date, day.RunKey)
			}
			var rd *report.Day
			for _, x := range rep.Days {
				if x.Date == day.Date {
					rd = &x
				}
			}
			if rd == nil {
				t.Fatalf("%s: verdict of run %s, whose report does not hold the day", day.Date, day.RunKey)
			}
			if day.Status != rd.Status || !cmp.Equal(day.API, rd.API) || !cmp.Equal(day.Local, rd.Local) {
				t.Errorf("%s: %s %v/%v, but run %s says %s %v/%v", day.Date, day.Status, day.API, day.Local, rep.RunKey, rd.Status, rd.API, rd.Local)
			}
			// No other report holding the day has a better claim.
			for _, h := range hs {
				if c, o := claim(h.day.Status), claim(rd.Status); c > o || c == o && h.rep.GeneratedAt.After(rep.GeneratedAt) {
					t.Errorf("%s: verdict of run %s (%s at %s), but run %s (%s at %s) is later or compared it", day.Date,
						rep.RunKey, rd.Status, rep.GeneratedAt, h.rep.RunKey, h.day.Status, h.rep.GeneratedAt)
				}
			}
			var missing, surplus int64
			switch rd.Status {
			case reconcile.Missing:
				missing = *rd.API - *rd.Local
			case reconcile.Surplus:
				surplus = *rd.Local - *rd.API
			}
			if day.Missing != missing || day.Surplus != surplus {
				t.Errorf("%s: missing %d surplus %d, want %d and %d", day.Date, day.Missing, day.Surplus, missing, surplus)
			}
			// When the gap was first found, and first seen healed after
			// the last report that showed it.
			var found, lastGap, healed time.Time
			for _, h := range hs {
				if h.day.Status == reconcile.Missing || h.day.Status == reconcile.Surplus {
					if found.IsZero() || h.rep.GeneratedAt.Before(found) {
						found = h.rep.GeneratedAt
					}
					if h.rep.GeneratedAt.After(lastGap) {
						lastGap = h.rep.GeneratedAt
					}
				}
			}
			if rd.Status == reconcile.Match && !lastGap.IsZero() {
				for _, h := range hs {
					if h.day.Status == reconcile.Match && h.rep.GeneratedAt.After(lastGap) && (healed.IsZero() || h.rep.GeneratedAt.Before(healed)) {
						healed = h.rep.GeneratedAt
					}
				}
			}
			if at := orZero(day.Found); !at.Equal(found) {
				t.Errorf("%s: found at %v, want %v", day.Date, at, found)
			}
			if at := orZero(day.Healed); !at.Equal(healed) {
				t.Errorf("%s: healed at %v, want %v", day.Date, at, healed)
			}
			loss := map[string]int64{}
			for _, dg := range rep.Diagnoses {
				if dg.Date == day.Date {
					loss[dg.Kind] += dg.Clicks
				}
			}
			if diff := cmp.Diff(loss, day.Loss, cmp.Comparer(func(a, b map[string]int64) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })); diff != "" && len(loss)+len(day.Loss) > 0 {
				t.Errorf("%s: loss by kind (-report +trend):\n%s", day.Date, diff)
			}
		}
		y, w := d.Start(time.UTC).ISOWeek()
		name := fmt.Sprintf("%04d-W%02d", y, w)
		if weeks[name] == nil {
			weeks[name] = &trend.Period{}
		}
		for _, p := range []*trend.Period{weeks[name], &total} {
			p.Days++
			if day.Checked && day.API != nil && day.Local != nil {
				p.API += *day.API
				p.Local += *day.Local
			}
			p.Missing += day.Missing
			p.Surplus += day.Surplus
			p.Restored += restored
			if !day.Checked {
				p.Unchecked++
			}
		}
	}
	if i != len(s.Days) {
		t.Errorf("the trend has %d days, the range %d", len(s.Days), i)
	}
	if len(weeks) != len(s.Weeks) {
		t.Errorf("%d weeks, want %d", len(s.Weeks), len(weeks))
	}
	for _, p := range append(s.Weeks, s.Total) {
		want := total
		if p.Name != "total" {
			want = *weeks[p.Name]
		}
		if p.Days != want.Days || p.API != want.API || p.Local != want.Local || p.Missing != want.Missing || p.Surplus != want.Surplus || p.Unchecked != want.Unchecked || p.Restored != want.Restored {
			t.Errorf("%s: days %d api %d local %d missing %d surplus %d unchecked %d restored %d; its days add up to %d, %d, %d, %d, %d, %d, %d",
				p.Name, p.Days, p.API, p.Local, p.Missing, p.Surplus, p.Unchecked, p.Restored, want.Days, want.API, want.Local, want.Missing, want.Surplus, want.Unchecked, want.Restored)
		}
	}
}

func orZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// The CSV has a row per period, each numbers as the JSON says them.
func TestCSVRowsAreThePeriods(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 35))
	start, _ := reconcile.ParseDate("2026-03-01")
	tr, _ := trend.New(start, start.AddDays(59))
	for _, rep := range randomNights(r, start, 64) {
		if err := tr.Add(rep); err != nil {
			t.Fatal(err)
		}
	}
	series := tr.Series()
	for _, by := range []string{"day", "week", "month"} {
		var b bytes.Buffer
		if err := trend.WriteCSV(&b, series, by); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		ps, _ := series[0].Periods(by)
		if len(rows) != len(ps)+1 {
			t.Fatalf("by %s: %d rows, want a header and %d", by, len(rows), len(ps))
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		var missing int64
		for i, p := range ps {
			row := rows[i+1]
			n, _ := strconv.ParseInt(row[col["missing"]], 10, 64)
			if row[col["period"]] != p.Name || n != p.Missing {
				t.Errorf("by %s row %d: %s missing %d, want %s %d", by, i, row[col["period"]], n, p.Name, p.Missing)
			}
			missing += n
		}
		if missing != series[0].Total.Missing {
			t.Errorf("by %s: the rows miss %d clicks, the total %d", by, missing, series[0].Total.Missing)
		}
	}
	if err := trend.WriteCSV(&bytes.Buffer{}, series, "year"); err == nil {
		t.Error("--by year was taken")
	}
}
