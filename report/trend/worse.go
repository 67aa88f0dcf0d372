package trend

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/reconcile"
)

// The rules of Worse: what makes a person hear that the nights are
// getting worse. Each asks for a pattern across days that one gap, which
// the gap alert already told, cannot make alone.
const (
	// RecentDays are the nights the rules look at, ending at the last day
	// compared; BaselineDays the nights before them that the loss rate is
	// compared with.
	RecentDays   = 7
	BaselineDays = 30
	// OutagesRecur is how many of the recent days with an outage make
	// outages recur: the third outage in 7 nights.
	OutagesRecur = 3
	// LeakRuns is how many days in a row, ending at the last day
	// compared, a steady leak must be diagnosed on.
	LeakRuns = 5
	// RateFactor, RateFloor and RateChance: the recent loss rate is worse
	// when it is at least RateFactor times the baseline's and at least
	// RateFloor, the baseline compared at least BaselineMin of its days
	// (a rate over a few days is no baseline), and as many recent days
	// with a gap would come by chance less than once in 1/RateChance
	// weeks at the baseline's own rate of gap days (a binomial tail, the
	// rate taken as (gap days + 1) / (days + 2), so a clean month is no
	// proof that gaps cannot happen): after a clean month, 4 of 7 days.
	// One outage, however large, is not a trend: its gap was alerted.
	RateFactor  = 3.0
	RateFloor   = 0.002
	RateChance  = 1e-4
	BaselineMin = 20
)

// Signal is one way the nights got worse.
type Signal struct {
	Key  string `json:"key"`  // outages, steady_leak or loss_rate: what the message is kept under
	Says string `json:"says"` // the sentence a person reads, with the numbers
}

// Worse returns the signals of s's last RecentDays days compared (the
// days before them a baseline): outages on OutagesRecur of them or more,
// a steady leak on each of the last LeakRuns, or a loss rate well above
// the baseline's (see the constants). None: nothing got worse, or too
// few days were compared to say. It weighs the days' latest verdicts, so
// a gap that healed no longer counts.
func Worse(s Series) []Signal {
	// The last day compared ends the recent days: a night that could not
	// compare (or the days not settled yet) must not shift them.
	last := -1
	for i, d := range s.Days {
		if rank(d.Status) == 2 {
			last = i
		}
	}
	if last < RecentDays-1 {
		return nil
	}
	recent := s.Days[last-RecentDays+1 : last+1]
	base := s.Days[max(0, last-RecentDays-BaselineDays+1) : last-RecentDays+1]
	var out []Signal

	var outages []string
	for _, d := range recent {
		if d.Loss[reconcile.DiagOutage] > 0 && d.Status == reconcile.Missing {
			outages = append(outages, d.Date)
		}
	}
	if len(outages) >= OutagesRecur {
		out = append(out, Signal{Key: reconcile.DiagOutage, Says: fmt.Sprintf("outages on %d of the last %d nights (%s)",
			len(outages), RecentDays, strings.Join(outages, ", "))})
	}

	run := 0
	for i := len(recent) - 1; i >= 0 && recent[i].Loss[reconcile.DiagSteadyLeak] > 0 && recent[i].Status == reconcile.Missing; i-- {
		run++
	}
	if run >= LeakRuns {
		out = append(out, Signal{Key: reconcile.DiagSteadyLeak, Says: fmt.Sprintf("a steady leak on each of the last %d nights, %s to %s",
			run, recent[len(recent)-run].Date, recent[len(recent)-1].Date)})
	}

	r, b := sum(recent), sum(base)
	compared := b.Checked - b.Provisional - b.Unverifiable
	if compared >= BaselineMin && r.API > 0 {
		now, before := r.LossRate(), b.LossRate()
		gapRate := float64(b.Gaps+1) / float64(compared+2)
		chance := binomialTail(r.Checked-r.Provisional-r.Unverifiable, r.Gaps, gapRate)
		if now >= RateFloor && now >= RateFactor*before && chance < RateChance {
			out = append(out, Signal{Key: "loss_rate", Says: fmt.Sprintf("the store missed %s of Elido's clicks over the last %d nights (%s of %s, %s), against %s over the %d before",
				pct(now), RecentDays, words.Num(r.Missing), words.Num(r.API), words.Plural(r.Gaps, "day with a gap", "days with a gap"),
				pct(before), len(base))})
		}
	}
	return out
}

// binomialTail is the chance of k or more successes in n trials of
// chance p each.
func binomialTail(n, k int, p float64) float64 {
	if k <= 0 {
		return 1
	}
	total := 0.0
	for i := k; i <= n; i++ {
		c := 1.0 // n choose i
		for j := range i {
			c = c * float64(n-j) / float64(j+1)
		}
		total += c * math.Pow(p, float64(i)) * math.Pow(1-p, float64(n-i))
	}
	return total
}

// sum adds up days as a period.
func sum(days []Day) Period {
	var p Period
	for _, d := range days {
		p.add(d)
	}
	return p
}

// Keys returns the keys of signals, sorted and joined by "+": what a
// message about them is kept under, the same whatever the numbers.
func Keys(signals []Signal) string {
	var ks []string
	for _, s := range signals {
		ks = append(ks, s.Key)
	}
	slices.Sort(ks)
	return strings.Join(ks, "+")
}
