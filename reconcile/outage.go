package reconcile

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/clickrecon/clickrecon/internal/words"
)

// outages finds the runs of consecutive Elido clicks all lost that a leak
// at the day's own rate would not produce: with n clicks and a rate p,
// about n·p^k runs of k lost clicks happen by chance, and a run is named
// only when that is below diagRunOdds and it holds DiagMinClicks clicks.
// A run with a click in a busy interval is that interval's loss (a poller
// that keeps the newest page of each window loses its oldest clicks in a
// row).
func (d *diagDay) outages(seq []flagged, busy busyBins) {
	type run struct{ i, j int }
	var runs []run
	for i := 0; i < len(seq); {
		if !seq[i].lost {
			i++
			continue
		}
		j := i
		inBusy := false
		for j < len(seq) && seq[j].lost {
			inBusy = inBusy || busy.holds(seq[j].TS)
			j++
		}
		if j-i >= DiagMinClicks && !inBusy {
			runs = append(runs, run{i, j})
		}
		i = j
	}
	if len(runs) == 0 {
		return
	}
	var n, lost, inRuns int64
	for i := range d.a {
		n, lost = n+d.a[i], lost+d.r[i]
	}
	for _, rn := range runs {
		inRuns += int64(rn.j - rn.i)
	}
	p := 0.0
	if n > inRuns {
		p = float64(lost-inRuns) / float64(n-inRuns)
	}
	named := map[clickKey]int{}
	for _, rn := range runs {
		k := rn.j - rn.i
		if p > 0 && float64(n)*math.Pow(p, float64(k)) >= diagRunOdds {
			continue
		}
		from, to := seq[rn.i].TS, seq[rn.j-1].TS
		links := map[string]bool{}
		for _, f := range seq[rn.i:rn.j] {
			links[f.LinkID] = true
			named[keyOf(f.Click)]++
			d.r[d.hourOf(f.TS)]--
			d.a[d.hourOf(f.TS)]--
		}
		nl := len(links)
		dur := to.Sub(from).Round(time.Second)
		d.found = append(d.found, Diagnosis{Kind: DiagOutage, From: from, To: to, Clicks: int64(k), Links: &nl,
			Evidence: []string{EvidenceRaw, EvidenceRows}, AtStart: rn.i == 0, AtEnd: rn.j == len(seq), dur: dur, retry: true,
			Message: fmt.Sprintf("the store recorded none of Elido's %d clicks on %s from %s to %s: an outage of %s, %s",
				k, words.Plural(nl, "link", "links"), clock(from, d.loc), clock(to, d.loc), span(dur), versusRetry(dur)),
		})
	}
	d.lost = slices.DeleteFunc(d.lost, func(c Click) bool {
		if k := keyOf(c); named[k] > 0 {
			named[k]--
			return true
		}
		return false
	})
}

// silentHours names an outage in each run of hours in which the store
// recorded no click although Elido counted DiagMinClicks or more.
func (d *diagDay) silentHours() {
	for i := 0; i < len(d.ev.Hours); {
		h := d.ev.Hours[i]
		if !(h.Local == 0 && h.API > 0) {
			i++
			continue
		}
		j := i
		var n int64
		for j < len(d.ev.Hours) && d.ev.Hours[j].Local == 0 && d.ev.Hours[j].API > 0 {
			n += d.ev.Hours[j].API
			j++
		}
		if n >= DiagMinClicks {
			for x := i; x < j; x++ {
				d.a[x], d.r[x] = 0, 0
			}
			from, to := d.hourStart(i), d.hourStart(j)
			d.found = append(d.found, Diagnosis{Kind: DiagOutage, From: from, To: to, Clicks: n, Links: d.wholeDay(n),
				Evidence: []string{EvidenceHourly}, AtStart: d.quiet(0, i), AtEnd: d.quiet(j, len(d.ev.Hours)), dur: to.Sub(from), retry: true,
				Message: fmt.Sprintf("the store recorded no click from %s although Elido counted %d: an outage of at least %s (hourly counts place it to the hour), %s",
					HourSpan(from, to, d.loc), n, span(to.Sub(from)), versusRetry(to.Sub(from))),
			})
		}
		i = j
	}
}

// quiet says that hours [i, j) hold no click on either side.
func (d *diagDay) quiet(i, j int) bool {
	for _, h := range d.ev.Hours[i:j] {
		if h.API != 0 || h.Local != 0 {
			return false
		}
	}
	return true
}

// outlyingOutages names an outage inside each run of consecutive
// outlying hours (out, in order), beyond the rate p of the other hours.
func (d *diagDay) outlyingOutages(out []int, p float64) {
	for k := 0; k < len(out); {
		j := k + 1
		for j < len(out) && out[j] == out[j-1]+1 {
			j++
		}
		explained, lost, clicks := d.hoursLoss(out[k:j], p)
		from, to := d.hourStart(out[k]), d.hourStart(out[j-1]+1)
		d.found = append(d.found, Diagnosis{Kind: DiagOutage, From: from, To: to, Clicks: explained, Links: d.wholeDay(explained),
			Evidence: []string{EvidenceHourly},
			Message: fmt.Sprintf("the store lost %d of the %d clicks Elido counted in %s, the rest of the day %s: an outage inside that span (hourly counts cannot place it closer)",
				lost, clicks, HourSpan(from, to, d.loc), rateWords(p)),
		})
		d.busyLeak += lost - explained
		for _, i := range out[k:j] {
			d.a[i], d.r[i] = 0, 0
		}
		k = j
	}
}
