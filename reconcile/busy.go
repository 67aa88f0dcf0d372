package reconcile

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/clickrecon/clickrecon/internal/words"
)

// diagIntervals are the interval lengths, in seconds, busy_intervals tries
// with raw clicks: a poller's window is commonly one of them.
var diagIntervals = []int{60, 300, 900}

// busyBins are the intervals busy_intervals named: their length in
// seconds and their starts (Unix seconds).
type busyBins struct {
	interval int64
	starts   map[int64]bool
}

func (b busyBins) holds(t time.Time) bool {
	return b.interval > 0 && b.starts[t.Unix()/b.interval*b.interval]
}

// bin is one interval of the raw hours: Elido's clicks in it and those
// lost.
type bin struct {
	start     int64 // Unix seconds
	api, lost int64
	hour      int
}

// busy looks for losses concentrated in the intervals where Elido's volume
// was highest: for each interval length and each threshold T (a count
// some interval holds), the lost clicks in the intervals holding more
// than T are compared with what the rate of the intervals at or below T
// would lose there. It is named when that excess reaches diagZ standard
// deviations and DiagMinClicks clicks, the intervals above T are at most
// half of those with clicks and 80% of them show an excess. The best
// z-score wins, the higher threshold on a tie. An interval that lost
// every click is an outage's, not a busy interval's, and is left out.
func (d *diagDay) busy() busyBins {
	if len(d.lost) == 0 {
		return busyBins{}
	}
	best := d.busiest()
	if best == nil {
		return busyBins{}
	}
	return d.nameBusy(best)
}

// busyPick is an interval length and threshold that passes busy's test,
// with the numbers its message gives.
type busyPick struct {
	z        float64
	interval int
	t        int64
	bins     []bin
	excess   float64
	above    []bin
}

// busiest tries every interval length and every threshold some interval
// holds, and returns the pick with the best z-score (the shorter interval,
// then the higher threshold, on a tie), or nil when none passes.
func (d *diagDay) busiest() *busyPick {
	var best *busyPick
	for _, iv := range diagIntervals {
		bins := d.bins(iv)
		counts := map[int64]bool{}
		// The hours not read lost nothing: their intervals count among
		// those with clicks, their clicks among those that kept.
		nonEmpty, unreadClicks := d.unreadIntervals(iv)
		for _, b := range bins {
			counts[b.api] = true
			if b.api > 0 {
				nonEmpty++
			}
		}
		for t := range counts {
			pk, ok := busyAbove(bins, iv, t, nonEmpty, unreadClicks)
			if !ok {
				continue
			}
			if best == nil || pk.z > best.z+1e-9 || (math.Abs(pk.z-best.z) <= 1e-9 && (iv < best.interval || iv == best.interval && t > best.t)) {
				best = &pk
			}
		}
	}
	return best
}

// busyAbove tests the intervals of iv seconds holding more than t clicks
// against the rate of those at or below t (with the unread hours' clicks,
// which lost nothing): it passes when at least diagMinBusy of them, and
// at most half of the nonEmpty intervals with clicks, lose diagZ standard
// deviations and DiagMinClicks clicks more than that rate would, and 80%
// of them show an excess.
func busyAbove(bins []bin, iv int, t int64, nonEmpty int, unreadClicks int64) (busyPick, bool) {
	var cAbove, lAbove, lBelow float64
	cBelow := float64(unreadClicks)
	var above []bin
	for _, b := range bins {
		if b.api > t {
			cAbove += float64(b.api)
			lAbove += float64(b.lost)
			above = append(above, b)
		} else {
			cBelow += float64(b.api)
			lBelow += float64(b.lost)
		}
	}
	if len(above) < diagMinBusy || 2*len(above) > nonEmpty {
		return busyPick{}, false
	}
	p := 0.0
	if cBelow > 0 {
		p = lBelow / cBelow
	}
	e := p * cAbove
	excess := lAbove - e
	z := excess / math.Sqrt(e+1)
	if z < diagZ || excess < DiagMinClicks {
		return busyPick{}, false
	}
	showing := 0
	for _, b := range above {
		exp := p * float64(b.api)
		if float64(b.lost) > exp+2*math.Sqrt(exp) {
			showing++
		}
	}
	if 5*showing < 4*len(above) {
		return busyPick{}, false
	}
	return busyPick{z: z, interval: iv, t: t, bins: bins, excess: excess, above: above}, true
}

// nameBusy takes the picked intervals' clicks out of what is left to
// explain, names them busy_intervals and returns them.
func (d *diagDay) nameBusy(best *busyPick) busyBins {
	explained := int64(math.Round(best.excess))
	found := busyBins{interval: int64(best.interval), starts: map[int64]bool{}}
	var lostAbove int64
	var from, to time.Time
	keptSame, keptAll := int64(-1), true
	for _, b := range best.above {
		found.starts[b.start] = true
		lostAbove += b.lost
		d.a[b.hour] -= b.api
		d.r[b.hour] -= b.lost
		kept := b.api - b.lost
		if keptSame < 0 {
			keptSame = kept
		} else if kept != keptSame {
			keptAll = false
		}
		start := time.Unix(b.start, 0)
		end := start.Add(time.Duration(best.interval) * time.Second)
		if from.IsZero() || start.Before(from) {
			from = start
		}
		to = maxTime(to, end)
	}
	links := map[string]bool{}
	sharing := 0
	d.lost = slices.DeleteFunc(d.lost, func(c Click) bool {
		if found.holds(c.TS) {
			links[c.LinkID] = true
			if d.kept[pairOf(c)] {
				sharing++
			}
			return true
		}
		return false
	})
	d.busyLeak = lostAbove - explained
	nl := len(links)
	msg := fmt.Sprintf("%d clicks were lost only in the %s holding more than %d clicks (%d of them, from %s to %s; the other intervals lost %s): a poller that does not follow next_cursor?",
		explained, intervalName(best.interval), best.t, len(best.above), clock(from, d.loc), clock(to, d.loc), belowRate(best.bins, best.t))
	if keptAll && len(best.above) > 1 {
		msg += fmt.Sprintf(" Each of them kept exactly %d clicks: one page.", keptSame)
	}
	if sharing > 0 {
		msg += fmt.Sprintf(" %s share their instant and link with a click the store recorded: a poller that resumes after the last (ts, link_id) it saw skips those too.",
			words.Plural(sharing, "lost click", "lost clicks"))
	}
	d.found = append(d.found, Diagnosis{Kind: DiagBusy, From: from.UTC(), To: to.UTC(), Clicks: explained, Links: &nl,
		Evidence: []string{EvidenceRaw, EvidenceRows}, Message: msg, IntervalS: best.interval, Threshold: best.t})
	return found
}

// unreadIntervals returns how many intervals of iv seconds the hours
// whose raw clicks were not read hold where Elido counted clicks, and
// those clicks.
func (d *diagDay) unreadIntervals(iv int) (intervals int, clicks int64) {
	for i, h := range d.ev.Hours {
		if _, read := d.rawAt[h.Start.UnixMilli()]; read || h.API == 0 {
			continue
		}
		intervals += max(1, int(d.hourStart(i+1).Sub(h.Start)/time.Second)/iv)
		clicks += h.API
	}
	return intervals, clicks
}

// belowRate says how much the intervals at or below t lost.
func belowRate(bins []bin, t int64) string {
	var c, l int64
	for _, b := range bins {
		if b.api <= t {
			c, l = c+b.api, l+b.lost
		}
	}
	if l == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%d of %d", l, c)
}

func intervalName(s int) string {
	if s == 3600 {
		return "hours"
	}
	return fmt.Sprintf("%d-minute intervals", s/60)
}

// bins counts Elido's clicks and the lost clicks of the raw hours in
// intervals of iv seconds aligned to the Unix epoch, leaving out the
// intervals that lost every click (an outage's).
func (d *diagDay) bins(iv int) []bin {
	idx := map[int64]int{}
	var bins []bin
	add := func(t time.Time, lost bool) {
		s := t.Unix() / int64(iv) * int64(iv)
		i, ok := idx[s]
		if !ok {
			i = len(bins)
			idx[s] = i
			bins = append(bins, bin{start: s, hour: d.hourOf(t)})
		}
		if lost {
			bins[i].lost++
		} else {
			bins[i].api++
		}
	}
	for _, c := range d.lost {
		add(c.TS, true)
	}
	for _, rh := range d.raw {
		for _, c := range rh.API {
			add(c.TS, false)
		}
	}
	return slices.DeleteFunc(bins, func(b bin) bool { return b.api > 0 && b.lost == b.api })
}

// busyHours returns the busy hours, when the outlying hours are the busiest ones, at
// least two of them, and lose a larger part of their clicks the busier
// they are (a page lost per poll loses c − page of c): every hour at least
// as busy as the least busy of them lost more than the day's rate too
// (two standard deviations), and none below the threshold it returns
// stands out.
func (d *diagDay) busyHours(out []int) ([]int, int64, bool) {
	if len(out) < 2 {
		return nil, 0, false
	}
	busy := slices.Clone(out)
	p := d.rateWithout(out)
	minOut := int64(math.MaxInt64)
	for _, i := range out {
		minOut = min(minOut, d.a[i])
	}
	var t int64 = -1
	for i, a := range d.a {
		if slices.Contains(out, i) {
			continue
		}
		if a >= minOut {
			e := p * float64(a)
			if float64(d.r[i])-e < 2*math.Sqrt(e*(1-p)+1) {
				return nil, 0, false
			}
			busy = append(busy, i)
			continue
		}
		t = max(t, a)
	}
	// The lost fraction grows with the volume.
	var sx, sy, sxy, sxx float64
	for _, i := range out {
		x, y := float64(d.a[i]), float64(d.r[i])/float64(d.a[i])
		sx, sy, sxy, sxx = sx+x, sy+y, sxy+x*y, sxx+x*x
	}
	n := float64(len(out))
	if sxy*n-sx*sy <= 0 || n*sxx-sx*sx == 0 {
		return nil, 0, false
	}
	slices.Sort(busy)
	return busy, t, t >= 0
}

// nameBusyHours names busy_intervals in the busy hours (in order) that
// busyHours returned with their threshold t: what they lost beyond the
// rate p of the other hours.
func (d *diagDay) nameBusyHours(busy []int, t int64, p float64) {
	explained, lost, clicks := d.hoursLoss(busy, p)
	from, to := d.hourStart(busy[0]), d.hourStart(busy[0]+1)
	for _, i := range busy {
		from, to = minTime(from, d.hourStart(i)), maxTime(to, d.hourStart(i+1))
	}
	d.found = append(d.found, Diagnosis{Kind: DiagBusy, From: from, To: to, Clicks: explained, Links: d.wholeDay(explained),
		Evidence: []string{EvidenceHourly}, IntervalS: 3600, Threshold: t,
		Message: fmt.Sprintf("%d clicks were lost only in the %d hours holding more than %d clicks (%d of their %d clicks), the other hours at %s: a poller that does not follow next_cursor? (hourly counts cannot show the busy minutes)",
			explained, len(busy), t, lost, clicks, rateWords(p)),
	})
	d.busyLeak = lost - explained
	for _, i := range busy {
		d.a[i], d.r[i] = 0, 0
	}
}
