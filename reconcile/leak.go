package reconcile

import (
	"fmt"
	"math"
)

// leak names a steady leak in what is left when the lost clicks are
// spread over the hours in proportion to Elido's volume: the chi-square
// of the lost counts of consecutive hours (pooled to expect
// diagMinExpected each, at least three pools) against that proportion
// must stay within its degrees of freedom plus four standard deviations
// (df + 4·√(2·df)), with diagMinLeak clicks over diagMinLeakHours hours.
func (d *diagDay) leak(raw bool) {
	var a, r int64
	var hours int
	for i := range d.a {
		if d.a[i] > 0 {
			a, r, hours = a+d.a[i], r+max(0, d.r[i]), hours+1
		}
	}
	if r < diagMinLeak || hours < diagMinLeakHours || a == 0 {
		return
	}
	p := float64(r) / float64(a)
	if p >= 1 {
		return
	}
	// Consecutive hours are pooled until each pool expects at least
	// diagMinExpected lost clicks, as a chi-square test needs.
	var chi2 float64
	var lossy, pools int
	var pa, pr int64
	flush := func() {
		e := p * float64(pa)
		diff := float64(pr) - e
		chi2 += diff * diff / (e * (1 - p))
		pools++
		pa, pr = 0, 0
	}
	for i := range d.a {
		if d.a[i] == 0 {
			continue
		}
		if d.r[i] > 0 {
			lossy++
		}
		pa, pr = pa+d.a[i], pr+max(0, d.r[i])
		if p*float64(pa) >= diagMinExpected {
			flush()
		}
	}
	if pa > 0 {
		flush() // a short last pool: its own term, a little noisier
	}
	df := float64(pools - 1)
	if pools < 3 || chi2 > df+4*math.Sqrt(2*df) {
		return
	}
	clicks := r + d.busyLeak
	var links *int
	ev := []string{EvidenceHourly}
	if raw {
		set := map[string]bool{}
		for _, c := range d.lost {
			set[c.LinkID] = true
		}
		n := len(set)
		links = &n
		ev = []string{EvidenceRaw, EvidenceRows, EvidenceHourly}
	} else {
		links = d.wholeDay(clicks)
	}
	for i := range d.r {
		d.r[i] = 0
	}
	d.busyLeak = 0
	from, to := d.hourStart(0), d.hourStart(len(d.ev.Hours))
	d.found = append(d.found, Diagnosis{Kind: DiagSteadyLeak, From: from, To: to, Clicks: clicks, Links: links, Evidence: ev, Rate: round3(p),
		Message: fmt.Sprintf("%d clicks were lost in proportion to Elido's volume, %s, in %d of the %d hours with clicks: a handler that drops a share of events (a timeout, a swallowed error)",
			clicks, rateWords(p), lossy, hours),
	})
}
