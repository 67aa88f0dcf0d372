package trend_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/trend"
)

// world is a sequence of days as nightly runs report them: each night
// checks the three days before it, some nights do not run or cannot read
// Elido. gapOn says whether a day lost clicks, how many, and why.
type world struct {
	r     *rand.Rand
	days  int
	gapOn func(i int) (lost int64, kind string)
}

// series runs the world's nights and returns the trend of all its days.
func (w world) series(t *testing.T) trend.Series {
	t.Helper()
	loc, _ := time.LoadLocation("Europe/Warsaw")
	start, _ := reconcile.ParseDate("2026-03-01")
	tr, err := trend.New(start, start.AddDays(w.days-1))
	if err != nil {
		t.Fatal(err)
	}
	api := make([]int64, w.days)
	lost := make([]int64, w.days)
	kind := make([]string, w.days)
	for i := range w.days {
		api[i] = 800 + w.r.Int64N(800)
		lost[i], kind[i] = w.gapOn(i)
	}
	for night := 1; night <= w.days; night++ {
		if w.r.IntN(12) == 0 {
			continue // a night that did not run
		}
		down := w.r.IntN(15) == 0
		rep := report.Report{RunKey: fmt.Sprintf("run%04d", night), WorkspaceID: "48213", StoreID: "st_1",
			Window: report.Window{TZ: loc.String()}, GeneratedAt: start.AddDays(night).Start(loc).Add(3 * time.Hour)}
		for i := max(0, night-3); i < night; i++ {
			a, l := api[i], api[i]-lost[i]
			d := report.Day{Date: start.AddDays(i).String(), API: &a, Local: &l, Settled: true, Status: reconcile.Match}
			switch {
			case down:
				d.API, d.Status = nil, reconcile.Unverifiable
			case lost[i] > 0:
				d.Status = reconcile.Missing
				rep.Diagnoses = append(rep.Diagnoses, report.Diagnosis{Date: d.Date, Kind: kind[i], Clicks: lost[i]})
			}
			rep.Days = append(rep.Days, d)
		}
		if err := tr.Add(rep); err != nil {
			t.Fatal(err)
		}
	}
	return tr.Series()[0]
}

// upTo is s cut after its day i: the trend as it stood that night.
func upTo(s trend.Series, i int) trend.Series {
	s.Days = s.Days[:i+1]
	return s
}

var kinds = []string{reconcile.DiagOutage, reconcile.DiagSteadyLeak, reconcile.DiagBusy, reconcile.DiagUnexplained}

// Clean histories, and histories whose gaps come at a steady rate (one
// day in fifty, of any kind and size), never make the nights "worse", on
// any night of them: what is heard must be a change, not noise.
func TestWorseIsNeverNoise(t *testing.T) {
	nights := 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 35))
		noisy := seed%3 != 0
		w := world{r: r, days: 150, gapOn: func(int) (int64, string) {
			if noisy && r.IntN(50) == 0 {
				return 1 + r.Int64N(300), kinds[r.IntN(len(kinds))]
			}
			return 0, ""
		}}
		s := w.series(t)
		for i := range s.Days {
			nights++
			if got := trend.Worse(upTo(s, i)); len(got) > 0 {
				t.Errorf("seed %d, noisy %v, night of %s: %+v", seed, noisy, s.Days[i].Date, got)
			}
		}
	}
	t.Logf("%d nights judged", nights)
}

// Each rule fires on the change it is for, with the numbers, and stops
// once the change has passed.
func TestWorseHearsTheChange(t *testing.T) {
	for _, tt := range []struct {
		name  string
		gapOn func(i int) (int64, string)
		key   string
		says  string
	}{
		{"third_outage_in_7_nights", func(i int) (int64, string) {
			if i == 100 || i == 102 || i == 105 {
				return 40, reconcile.DiagOutage
			}
			return 0, ""
		}, reconcile.DiagOutage, "outages on 3 of the last 7 nights"},
		{"steady_leak_5_nights_running", func(i int) (int64, string) {
			if i >= 101 && i <= 105 {
				return 12, reconcile.DiagSteadyLeak
			}
			return 0, ""
		}, reconcile.DiagSteadyLeak, "a steady leak on each of the last 5 nights"},
		{"loss_rate_well_above_the_month_before", func(i int) (int64, string) {
			if i >= 100 && i <= 105 && i != 103 {
				return 30, reconcile.DiagBusy
			}
			if i == 80 {
				return 5, reconcile.DiagUnexplained
			}
			return 0, ""
		}, "loss_rate", "of Elido's clicks over the last 7 nights"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(9, 9))
			s := world{r: r, days: 140, gapOn: tt.gapOn}.series(t)
			// Found on the night after day 105, when day 105 is compared.
			var heard []string
			for i := range s.Days {
				for _, sig := range trend.Worse(upTo(s, i)) {
					if sig.Key == tt.key {
						heard = append(heard, s.Days[i].Date)
						if !strings.Contains(sig.Says, tt.says) {
							t.Errorf("%s: %q lacks %q", s.Days[i].Date, sig.Says, tt.says)
						}
					}
				}
			}
			if len(heard) == 0 {
				t.Fatalf("no %s signal on any night", tt.key)
			}
			if heard[0] != "2026-06-14" { // day 105
				t.Errorf("first heard on %s, want 2026-06-14, the day that made the pattern", heard[0])
			}
			if last := heard[len(heard)-1]; last >= "2026-06-25" {
				t.Errorf("still heard on %s, 11 days after the change ended", last)
			}
		})
	}
}

// A gap that healed (its latest verdict is match) no longer counts: three
// outages of which one healed are not the third outage.
func TestWorseWeighsTheLatestVerdicts(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	s := world{r: r, days: 110, gapOn: func(i int) (int64, string) {
		if i == 100 || i == 102 || i == 105 {
			return 40, reconcile.DiagOutage
		}
		return 0, ""
	}}.series(t)
	s = upTo(s, 105)
	if got := trend.Worse(s); len(got) != 1 {
		t.Fatalf("three outages: %+v, want one signal", got)
	}
	healed := s
	healed.Days = append([]trend.Day(nil), s.Days...)
	d := &healed.Days[100]
	d.Status, d.Missing, d.Loss = reconcile.Match, 0, nil
	if got := trend.Worse(healed); len(got) != 0 {
		t.Errorf("two outages and a healed one: %+v, want none", got)
	}
}
