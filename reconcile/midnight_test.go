package reconcile

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// A reference model of outages across midnight: windows of three days in
// several zones (DST days among them), each losing one outage of random
// start and length, from two minutes to thirty hours. From the clicks
// alone it works out which day's part is named (5 lost clicks or more),
// which parts reach midnight, which continue into the next day, the whole
// outage's span, and whether its length is known; the diagnoses joined by
// JoinMidnight must say the same.
func TestJoinMidnightAgainstModel(t *testing.T) {
	zones := []string{"Europe/Warsaw", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "UTC"}
	firsts := []string{"2026-03-07", "2026-10-24", "2026-11-10", "2026-04-04"}
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 35))
		zone, first := zones[rng.IntN(len(zones))], firsts[rng.IntN(len(firsts))]
		t.Run(fmt.Sprintf("%d_%s_%s", seed, zone, first), func(t *testing.T) {
			const n = 3
			start, _ := ParseDate(first)
			var gens []*genDay
			for k := range n {
				gens = append(gens, newGenDay(t, zone, start.AddDays(k).String(), 20+rng.Float64()*150, 5, seed*10+uint64(k)))
			}
			dayStart, _ := start.Bounds(gens[0].loc)
			from := dayStart.Add(time.Duration(rng.Int64N(int64(2 * 24 * time.Hour))))
			to := from.Add(2*time.Minute + time.Duration(rng.Int64N(int64(30*time.Hour))))
			var days []DayDiagnosis
			type part struct {
				lost           int
				first, last    time.Time
				atStart, atEnd bool
			}
			parts := make([]part, n)
			for k, g := range gens {
				g.outage(from, to)
				p := &parts[k]
				for _, c := range g.api {
					if !c.TS.Before(from) && c.TS.Before(to) {
						if p.lost == 0 {
							p.first = c.TS
						}
						p.last, p.lost = c.TS, p.lost+1
					}
				}
				if p.lost > 0 {
					p.atStart, p.atEnd = true, true
					for _, c := range g.api {
						p.atStart = p.atStart && !c.TS.Before(p.first)
						p.atEnd = p.atEnd && !c.TS.After(p.last)
					}
				}
				days = append(days, Diagnose(g.evidence(true), g.loc))
			}
			named := func(k int) bool { return k >= 0 && k < n && parts[k].lost >= DiagMinClicks }
			JoinMidnight(days, gens[0].loc, func(d Date) Beside {
				for k := range n {
					if start.AddDays(k) == d && parts[k].lost == 0 {
						return Beside{Ended: true, Why: d.String() + " holds every click"}
					}
				}
				return Beside{Why: d.String() + " was not checked"}
			})
			for k := range n {
				if !named(k) {
					continue
				}
				var o *Diagnosis
				for i := range days[k].Diagnoses {
					if days[k].Diagnoses[i].Kind == DiagOutage {
						o = &days[k].Diagnoses[i]
					}
				}
				if o == nil {
					t.Fatalf("day %d: no outage among %s", k, describe(days[k]))
				}
				into := named(k+1) && parts[k].atEnd && parts[k+1].atStart
				from := k > 0 && named(k-1) && parts[k-1].atEnd && parts[k].atStart
				if (o.ContinuesInto != nil) != into || (o.ContinuesFrom != nil) != from {
					t.Errorf("day %d: continues from %v into %v, the model %v and %v (%+v)", k, o.ContinuesFrom, o.ContinuesInto, from, into, parts)
				}
				if o.AtStart != parts[k].atStart || o.AtEnd != parts[k].atEnd {
					t.Errorf("day %d: at start %v, end %v, the model %v, %v", k, o.AtStart, o.AtEnd, parts[k].atStart, parts[k].atEnd)
				}
				// The chain of parts this one belongs to.
				a, b := k, k
				for a > 0 && named(a-1) && parts[a-1].atEnd && parts[a].atStart {
					a--
				}
				for b+1 < n && named(b+1) && parts[b].atEnd && parts[b+1].atStart {
					b++
				}
				whole := parts[b].last.Sub(parts[a].first).Round(time.Second)
				knownBefore := !parts[a].atStart || a > 0 && (parts[a-1].lost == 0 || named(a-1))
				knownAfter := !parts[b].atEnd || b+1 < n && (parts[b+1].lost == 0 || named(b+1))
				var verdict string
				switch {
				case whole > RetryWindow:
					verdict = "longer than Elido's ~20-minute retry window"
				case knownBefore && knownAfter:
					verdict = "within Elido's ~20-minute retry window"
				default:
					verdict = "cannot be told"
				}
				if !strings.Contains(o.Message, verdict) {
					t.Errorf("day %d: %q, want %q (whole %s)", k, o.Message, verdict, whole)
				}
				if b > a && !strings.Contains(o.Message, "one outage of "+span(whole)+" ") {
					t.Errorf("day %d: %q, want one outage of %s", k, o.Message, span(whole))
				}
				if strings.Contains(o.Message, "poller") && (!knownBefore || !knownAfter) {
					t.Errorf("day %d: %q blames a poller for an outage whose length is not known", k, o.Message)
				}
			}
		})
	}
}
