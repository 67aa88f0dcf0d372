package reconcile

import (
	"math"
	"slices"
)

// hourly diagnoses a day from the hourly counts alone: duplicates among
// the store's rows of its hours with a surplus (when read), hours in
// which the store recorded nothing, hours whose loss stands out from the
// day's rate (the busiest hours: busy_intervals; else an outage inside
// them), then a steady leak of the rest.
func (d *diagDay) hourly() {
	for i := range d.r {
		d.gap += d.r[i] + d.surplus[i]
	}
	d.duplicates(d.rowRepeats())
	d.silentHours()
	if out := d.outliers(); len(out) > 0 {
		p := d.rateWithout(out)
		if busy, t, ok := d.busyHours(out); ok {
			d.nameBusyHours(busy, t, p)
		} else {
			d.outlyingOutages(out, p)
		}
	}
	d.leak(false)
}

// hoursLoss adds up the given hours: the lost clicks beyond what the rate
// p would lose (rounded, what a diagnosis of them explains), their lost
// clicks and Elido's clicks.
func (d *diagDay) hoursLoss(hours []int, p float64) (explained, lost, clicks int64) {
	var excess float64
	for _, i := range hours {
		excess += float64(d.r[i]) - p*float64(d.a[i])
		lost, clicks = lost+d.r[i], clicks+d.a[i]
	}
	return int64(math.Round(excess)), lost, clicks
}

// outliers returns the hours (in order) whose loss stands out from the
// rate of the other hours by diagZ standard deviations and
// DiagMinClicks clicks, removing the most outlying first, at most a third
// of the hours with clicks.
func (d *diagDay) outliers() []int {
	var out []int
	in := map[int]bool{}
	var withClicks int
	for _, a := range d.a {
		if a > 0 {
			withClicks++
		}
	}
	for len(out)*3 < withClicks {
		p := d.rateWithout(out)
		bestI, bestZ := -1, 0.0
		for i := range d.a {
			if in[i] || d.a[i] == 0 {
				continue
			}
			e := p * float64(d.a[i])
			excess := float64(d.r[i]) - e
			z := excess / math.Sqrt(e*(1-p)+1)
			if z >= diagZ && excess >= DiagMinClicks && z > bestZ {
				bestI, bestZ = i, z
			}
		}
		if bestI < 0 {
			break
		}
		in[bestI] = true
		out = append(out, bestI)
	}
	slices.Sort(out)
	return out
}

// rateWithout is the lost fraction of the hours not in skip.
func (d *diagDay) rateWithout(skip []int) float64 {
	var a, r int64
	for i := range d.a {
		if !slices.Contains(skip, i) {
			a, r = a+d.a[i], r+d.r[i]
		}
	}
	if a == 0 {
		return 0
	}
	return float64(r) / float64(a)
}
