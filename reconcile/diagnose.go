package reconcile

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/internal/words"
)

// The kinds of diagnosis: each is a way an integration loses (or
// repeats) clicks, recognised by the shape it leaves in the data.
const (
	DiagOutage      = "outage"         // a stretch in which the store recorded nothing
	DiagSteadyLeak  = "steady_leak"    // about the same fraction of every hour lost
	DiagBusy        = "busy_intervals" // losses only where Elido's volume was highest
	DiagDuplicates  = "duplicates"     // store rows repeating another row exactly
	DiagUnexplained = "unexplained"    // what no shape explains
)

// The evidence a diagnosis rests on.
const (
	EvidenceRaw    = "raw_clicks" // Elido's raw clicks (clicks/recent)
	EvidenceHourly = "hourly"     // both sides' hourly counts
	EvidenceRows   = "store_rows" // the store's rows, click by click
)

// The rules that keep noise from becoming a diagnosis. They are stated in
// docs/reports.md; changing one changes what a report claims.
const (
	// DiagMinClicks is the fewest clicks a day's gap, an outage, a
	// busy-interval loss or a remainder must hold to be named.
	DiagMinClicks = 5
	// DiagMinDuplicates is the fewest repeated rows called duplicates: a
	// row the store holds more often than Elido counts it is no accident
	// of chance, but one could be a row written by hand.
	DiagMinDuplicates = 3
	// diagMinLeak and diagMinLeakHours: a steady leak needs this many
	// lost clicks over at least this many hours with clicks.
	diagMinLeak      = 10
	diagMinLeakHours = 6
	// diagMinExpected is the fewest lost clicks a pool of hours of the
	// steady leak's test expects.
	diagMinExpected = 5
	// diagZ is the z-score a concentration of losses must reach (in an
	// hour, or above a volume threshold) against the day's own leak rate;
	// diagRunOdds the expected number of runs as long as an outage's that
	// a leak at the day's rate would produce by chance.
	diagZ = 5.0
	// diagMinBusy is the fewest intervals a busy-interval loss spans with
	// raw clicks: one interval that lost part of its clicks is as likely
	// the edge of an outage.
	diagMinBusy = 3
	diagRunOdds = 0.001
	// RetryWindow is how long Elido keeps retrying a failed webhook
	// delivery (5 and then 15 minutes later).
	RetryWindow = 20 * time.Minute
)

// kindOrder is the order a day's diagnoses are listed in.
var kindOrder = map[string]int{DiagOutage: 0, DiagBusy: 1, DiagDuplicates: 2, DiagSteadyLeak: 3, DiagUnexplained: 4}

// diagIntervals are the interval lengths, in seconds, busy_intervals tries
// with raw clicks: a poller's window is commonly one of them.
var diagIntervals = []int{60, 300, 900}

// Click is one raw click as a diagnosis reads it: its instant, link and
// country, from Elido's clicks/recent or the store's rows.
type Click struct {
	TS          time.Time
	LinkID      string
	CountryCode string
}

// HourPair is one hour's count on both sides; Start is its first instant.
type HourPair struct {
	Start      time.Time
	API, Local int64
}

// RawHour is an hour [From, To) whose clicks were read from both sides:
// every click Elido has and every row the store has.
type RawHour struct {
	From, To   time.Time
	API, Local []Click
}

// RowHour is an hour [From, To) whose store rows were read without
// Elido's raw clicks: what an hour with a surplus holds, at no Elido
// request.
type RowHour struct {
	From, To time.Time
	Rows     []Click
}

// DayEvidence is what a diagnosis of one day reads: every hour's counts
// (required), and the raw clicks of the hours that were read. A day is
// diagnosed from raw clicks only when every hour whose counts differ was
// read on both sides and holds exactly its counts; else from the hourly
// counts alone, and then the store's rows of its hours with a surplus
// (Rows), each used when it holds exactly its hour's count, tell
// duplicates apart.
type DayEvidence struct {
	Date  Date
	Hours []HourPair // every hour of the day, in order
	Raw   []RawHour
	Rows  []RowHour
	// LinksLost is how many links lost clicks that day, from the
	// per-link comparison, when every link was compared; nil otherwise.
	// The hourly counts say nothing of links: it is given for a
	// diagnosis that explains the whole day's loss.
	LinksLost *int
}

// Diagnosis is a hypothesis of why clicks were lost (or repeated) on a
// day, with every number computed from the evidence it names.
type Diagnosis struct {
	Date     Date
	Kind     string
	From, To time.Time // the outage's window, or the span the diagnosis covers
	Clicks   int64     // the clicks it explains
	Share    float64   // the part of the day's gap it explains, 0 to 1
	Links    *int      // how many links it touches; nil when not known
	Evidence []string  // EvidenceRaw, EvidenceHourly, EvidenceRows
	Message  string
	// IntervalS and Threshold, for busy_intervals: the interval's length
	// in seconds, and the clicks per interval above which clicks were
	// lost.
	IntervalS int
	Threshold int64
	// Rate is a steady leak's lost fraction.
	Rate float64
	// AtStart and AtEnd, for an outage, say that it reaches the day's
	// first or last instant as far as its evidence places it: no click the
	// store recorded (nor an hour that matched) lies between it and
	// midnight. Midnight is no event of the integration's: such an outage
	// is one with the next day's (or the day before's) that begins (ends)
	// at midnight, and JoinMidnight says so.
	AtStart, AtEnd bool
	// ContinuesFrom and ContinuesInto name the day the outage continues
	// from or into (JoinMidnight); nil when it does not, or is not known to.
	ContinuesFrom, ContinuesInto *Date
	// dur is the span the message's retry-window verdict was judged on;
	// retry says the message ends with that verdict (versusRetry).
	dur   time.Duration
	retry bool
}

// TimeBin is one bin of a diagnosed day's timeline: both sides' clicks
// in [Start, Start+Seconds).
type TimeBin struct {
	Start      time.Time
	Seconds    int
	API, Local int64
}

// DayDiagnosis is what Diagnose finds for a day: its diagnoses (none when
// the evidence is too thin, and then Note says why), the timeline a
// report draws, and the instants of the duplicated rows.
type DayDiagnosis struct {
	Date       Date
	Gap        int64 // the day's gap: lost clicks plus surplus rows
	Evidence   string
	Diagnoses  []Diagnosis
	Timeline   []TimeBin
	Duplicates []time.Time
	Note       string
}

// Diagnose names the shapes of a day's gap from its evidence: outages
// first, then busy-interval losses, duplicates, a steady leak of what is
// left, and an unexplained remainder. Every number comes from the
// evidence; a shape whose test fails is not named, and its clicks stay in
// the remainder.
func Diagnose(ev DayEvidence, loc *time.Location) DayDiagnosis {
	out := DayDiagnosis{Date: ev.Date}
	if len(ev.Hours) == 0 {
		out.Note = "the hourly counts were not read"
		return out
	}
	raw, why := usableRaw(ev)
	d := newDay(ev, raw, loc)
	out.Timeline = d.timeline()
	if raw == nil {
		out.Evidence = EvidenceHourly
		if why != "" {
			out.Note = why
		}
		d.hourly()
	} else {
		out.Evidence = EvidenceRaw
		d.clicks()
	}
	out.Gap = d.gap
	if d.gap < DiagMinClicks {
		out.Diagnoses, out.Duplicates = nil, nil
		out.Note = fmt.Sprintf("the gap of %s is too small to show a shape (fewer than %d)", words.Plural(int(d.gap), "click", "clicks"), DiagMinClicks)
		return out
	}
	d.remainder()
	slices.SortStableFunc(d.found, func(x, y Diagnosis) int {
		return cmp.Or(cmp.Compare(kindOrder[x.Kind], kindOrder[y.Kind]), x.From.Compare(y.From))
	})
	out.Diagnoses, out.Duplicates = d.found, d.dupTimes
	for i := range out.Diagnoses {
		out.Diagnoses[i].Date = ev.Date
		out.Diagnoses[i].Share = round3(float64(out.Diagnoses[i].Clicks) / float64(d.gap))
	}
	return out
}

// usableRaw returns the raw hours when they cover every hour whose counts
// differ and hold exactly those counts, else nil and why not.
func usableRaw(ev DayEvidence) ([]RawHour, string) {
	if len(ev.Raw) == 0 {
		return nil, ""
	}
	byStart := map[int64]RawHour{}
	for _, r := range ev.Raw {
		byStart[r.From.UnixMilli()] = r
	}
	var raw []RawHour
	for _, h := range ev.Hours {
		r, ok := byStart[h.Start.UnixMilli()]
		switch {
		case ok && (int64(len(r.API)) != h.API || int64(len(r.Local)) != h.Local):
			return nil, fmt.Sprintf("the raw clicks of %s do not add up to its counts: diagnosed from the hourly counts", h.Start.UTC().Format(time.RFC3339))
		case ok:
			raw = append(raw, r)
		case h.API != h.Local:
			return nil, "not every hour that differs had its raw clicks read: diagnosed from the hourly counts"
		}
	}
	return raw, ""
}

// diagDay is a diagnosis under way.
type diagDay struct {
	ev  DayEvidence
	loc *time.Location
	raw []RawHour
	// rawAt are the raw hours by their first instant (Unix ms).
	rawAt map[int64]RawHour
	// a and r are each hour's Elido clicks and lost clicks not yet
	// explained; surplus its surplus rows not yet explained.
	a, r, surplus []int64
	gap           int64
	found         []Diagnosis
	dupTimes      []time.Time
	// lost are the lost clicks of the raw hours not yet explained.
	lost []Click
	// kept are the (instant, link) pairs of the clicks the store recorded.
	kept map[pairKey]bool
	// busyLeak is the lost clicks inside the intervals or hours named
	// busy (or an hourly outage) that the day's leak rate accounts for:
	// the leak's when a leak is named, else the remainder's.
	busyLeak int64
}

func newDay(ev DayEvidence, raw []RawHour, loc *time.Location) *diagDay {
	d := &diagDay{ev: ev, loc: loc, raw: raw, rawAt: map[int64]RawHour{}}
	for _, r := range raw {
		d.rawAt[r.From.UnixMilli()] = r
	}
	n := len(ev.Hours)
	d.a, d.r, d.surplus = make([]int64, n), make([]int64, n), make([]int64, n)
	for i, h := range ev.Hours {
		d.a[i] = h.API
		d.r[i] = max(0, h.API-h.Local)
		d.surplus[i] = max(0, h.Local-h.API)
	}
	return d
}

// hourOf returns the index of the hour holding t, or -1.
func (d *diagDay) hourOf(t time.Time) int {
	i, _ := slices.BinarySearchFunc(d.ev.Hours, t, func(h HourPair, t time.Time) int {
		return h.Start.Compare(t)
	})
	if i < len(d.ev.Hours) && d.ev.Hours[i].Start.Equal(t) {
		return i
	}
	return i - 1
}

// timeline is the day's bins: a minute each in the raw hours, an hour
// each elsewhere.
func (d *diagDay) timeline() []TimeBin {
	var bins []TimeBin
	for _, h := range d.ev.Hours {
		r, ok := d.rawAt[h.Start.UnixMilli()]
		if !ok {
			bins = append(bins, TimeBin{Start: h.Start, Seconds: 3600, API: h.API, Local: h.Local})
			continue
		}
		first := len(bins)
		for t := r.From; t.Before(r.To); t = t.Add(time.Minute) {
			bins = append(bins, TimeBin{Start: t, Seconds: 60})
		}
		for _, c := range r.API {
			bins[first+int(c.TS.Sub(r.From)/time.Minute)].API++
		}
		for _, c := range r.Local {
			bins[first+int(c.TS.Sub(r.From)/time.Minute)].Local++
		}
	}
	return bins
}

// clickKey is a click as the comparison tells clicks apart.
type clickKey struct {
	ms            int64
	link, country string
}

func keyOf(c Click) clickKey { return clickKey{c.TS.UnixMilli(), c.LinkID, c.CountryCode} }

// pairKey is a click's (instant, link): where a poller resumes.
type pairKey struct {
	ms   int64
	link string
}

func pairOf(c Click) pairKey { return pairKey{c.TS.UnixMilli(), c.LinkID} }

// flagged is an Elido click of the raw hours, lost or kept, or a marker
// standing for an unread hour's clicks (all kept).
type flagged struct {
	Click
	lost   bool
	marker bool
}

// clicks diagnoses a day from its raw clicks: the gap is every lost click
// and every surplus row; outages, busy intervals and duplicates are found
// click by click, then a steady leak in what is left.
func (d *diagDay) clicks() {
	for i := range d.r {
		d.r[i], d.surplus[i] = 0, 0
	}
	var seq []flagged
	var dupes []Click
	for i, h := range d.ev.Hours {
		rh, ok := d.rawAt[h.Start.UnixMilli()]
		if !ok {
			if h.API > 0 {
				seq = append(seq, flagged{Click: Click{TS: h.Start}, marker: true})
			}
			continue
		}
		local := map[clickKey]int{}
		for _, c := range rh.Local {
			local[keyOf(c)]++
		}
		api := slices.Clone(rh.API)
		slices.SortStableFunc(api, func(x, y Click) int { return x.TS.Compare(y.TS) })
		apiCount := map[clickKey]int{}
		for _, c := range api {
			apiCount[keyOf(c)]++
		}
		seen := map[clickKey]int{}
		for _, c := range api {
			k := keyOf(c)
			seen[k]++
			// The first occurrences of a key are the lost ones; which of
			// two identical clicks was lost cannot be told.
			lost := seen[k] <= apiCount[k]-local[k]
			seq = append(seq, flagged{Click: c, lost: lost})
			if lost {
				d.r[i]++
				d.gap++
			}
		}
		for _, c := range sortedClicks(rh.Local) {
			k := keyOf(c)
			if local[k] <= apiCount[k] {
				continue
			}
			// A row beyond Elido's count: a duplicate when it repeats
			// another row of the store.
			local[k]--
			d.gap++
			if local[k] >= 1 {
				dupes = append(dupes, c)
			} else {
				d.surplus[i]++
			}
		}
	}
	d.kept = map[pairKey]bool{}
	for _, f := range seq {
		switch {
		case f.lost:
			d.lost = append(d.lost, f.Click)
		case !f.marker:
			d.kept[pairOf(f.Click)] = true
		}
	}
	above := d.busy()
	d.outages(seq, above)
	d.duplicates(dupes)
	d.leak(true)
}

func sortedClicks(cs []Click) []Click {
	cs = slices.Clone(cs)
	slices.SortStableFunc(cs, func(x, y Click) int {
		return cmp.Or(x.TS.Compare(y.TS), strings.Compare(x.LinkID, y.LinkID), strings.Compare(x.CountryCode, y.CountryCode))
	})
	return cs
}

// busyBins are the intervals busy_intervals named: their length in
// seconds and their starts (Unix seconds).
type busyBins struct {
	interval int64
	starts   map[int64]bool
}

func (b busyBins) holds(t time.Time) bool {
	return b.interval > 0 && b.starts[t.Unix()/b.interval*b.interval]
}

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

// versusRetry compares an outage with Elido's retry window.
func versusRetry(dur time.Duration) string {
	if dur > RetryWindow {
		return "longer than Elido's ~20-minute retry window"
	}
	return "within Elido's ~20-minute retry window, so retried deliveries should have filled it: a poller that stopped?"
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
	type pick struct {
		z        float64
		interval int
		t        int64
		bins     []bin
		excess   float64
		above    []bin
	}
	var best *pick
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
				continue
			}
			p := 0.0
			if cBelow > 0 {
				p = lBelow / cBelow
			}
			e := p * cAbove
			excess := lAbove - e
			z := excess / math.Sqrt(e+1)
			if z < diagZ || excess < DiagMinClicks {
				continue
			}
			showing := 0
			for _, b := range above {
				exp := p * float64(b.api)
				if float64(b.lost) > exp+2*math.Sqrt(exp) {
					showing++
				}
			}
			if 5*showing < 4*len(above) {
				continue
			}
			if best == nil || z > best.z+1e-9 || (math.Abs(z-best.z) <= 1e-9 && (iv < best.interval || iv == best.interval && t > best.t)) {
				best = &pick{z: z, interval: iv, t: t, bins: bins, excess: excess, above: above}
			}
		}
	}
	if best == nil {
		return busyBins{}
	}
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

// duplicates names the store's rows that repeat another row exactly
// beyond Elido's count. The store keeps a click's instant, not when it was
// written, so the delay to the twin cannot be measured from the rows: the
// message gives the span of the repeated clicks. From hourly counts
// (rowRepeats) the rows are already counted in their hours' surplus, and
// the span is their hours'.
func (d *diagDay) duplicates(dupes []Click) {
	if len(dupes) < DiagMinDuplicates {
		if d.raw != nil {
			for _, c := range dupes {
				d.surplus[d.hourOf(c.TS)]++
			}
		}
		return
	}
	links := map[string]bool{}
	for _, c := range dupes {
		links[c.LinkID] = true
		d.dupTimes = append(d.dupTimes, c.TS)
	}
	nl := len(links)
	from, to := dupes[0].TS, dupes[0].TS
	for _, c := range dupes {
		from, to = minTime(from, c.TS), maxTime(to, c.TS)
	}
	if d.raw == nil {
		for _, c := range dupes {
			d.surplus[d.hourOf(c.TS)]--
		}
		from, to = d.hourStart(d.hourOf(from)), d.hourStart(d.hourOf(to)+1)
		d.found = append(d.found, Diagnosis{Kind: DiagDuplicates, From: from, To: to, Clicks: int64(len(dupes)), Links: &nl,
			Evidence: []string{EvidenceHourly, EvidenceRows},
			Message: fmt.Sprintf("the store holds %d rows that repeat another row exactly (same instant, link and country) in %s, on %s, beyond Elido's hourly count: a handler that is not idempotent records a retried delivery twice? Use X-Webhook-Delivery as the idempotency key. Elido's raw clicks were not read, so the repeats are counted only up to each hour's surplus, and which of the twins Elido counted cannot be told",
				len(dupes), HourSpan(from, to, d.loc), words.Plural(nl, "link", "links")),
		})
		return
	}
	d.found = append(d.found, Diagnosis{Kind: DiagDuplicates, From: from, To: to, Clicks: int64(len(dupes)), Links: &nl,
		Evidence: []string{EvidenceRows, EvidenceRaw},
		Message: fmt.Sprintf("the store holds %d rows that repeat another row exactly (instant, link and country) beyond Elido's count, on %s, for clicks from %s to %s: a delivery recorded twice, as a handler that is not idempotent does when a delivery is retried (5 or 15 minutes after a failure); the rows keep no arrival time, so the delay to the twin cannot be measured",
			len(dupes), words.Plural(nl, "link", "links"), clock(from, d.loc), clock(to, d.loc)),
	})
}

// rowRepeats returns, for a day diagnosed from hourly counts, the store's
// rows of each hour with a surplus that repeat another row of it exactly
// (a row held k times repeats k-1 times), at most the hour's surplus: the
// hourly counts say how many rows are beyond Elido's count, not which.
// An hour whose rows do not add up to its count (the store changed) is
// left out.
func (d *diagDay) rowRepeats() []Click {
	rows := map[int64]RowHour{}
	for _, r := range d.ev.Rows {
		rows[r.From.UnixMilli()] = r
	}
	var dupes []Click
	for i, h := range d.ev.Hours {
		r, ok := rows[h.Start.UnixMilli()]
		if !ok || d.surplus[i] == 0 || int64(len(r.Rows)) != h.Local {
			continue
		}
		seen := map[clickKey]bool{}
		var n int64
		for _, c := range sortedClicks(r.Rows) {
			k := keyOf(c)
			if seen[k] && n < d.surplus[i] {
				dupes = append(dupes, c)
				n++
			}
			seen[k] = true
		}
	}
	return dupes
}

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
	// Hours with no click in the store although Elido counted some.
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
	out := d.outliers()
	if len(out) == 0 {
		d.leak(false)
		return
	}
	p := d.rateWithout(out)
	if busy, t, ok := d.busyHours(out); ok {
		out = busy
		var excess float64
		var lost, clicks int64
		from, to := d.hourStart(out[0]), d.hourStart(out[0]+1)
		for _, i := range out {
			excess += float64(d.r[i]) - p*float64(d.a[i])
			lost, clicks = lost+d.r[i], clicks+d.a[i]
			from, to = minTime(from, d.hourStart(i)), maxTime(to, d.hourStart(i+1))
		}
		explained := int64(math.Round(excess))
		d.found = append(d.found, Diagnosis{Kind: DiagBusy, From: from, To: to, Clicks: explained, Links: d.wholeDay(explained),
			Evidence: []string{EvidenceHourly}, IntervalS: 3600, Threshold: t,
			Message: fmt.Sprintf("%d clicks were lost only in the %d hours holding more than %d clicks (%d of their %d clicks), the other hours at %s: a poller that does not follow next_cursor? (hourly counts cannot show the busy minutes)",
				explained, len(out), t, lost, clicks, rateWords(p)),
		})
		d.busyLeak = lost - explained
		for _, i := range out {
			d.a[i], d.r[i] = 0, 0
		}
		d.leak(false)
		return
	}
	// Outlying hours next to each other are one outage inside them.
	for k := 0; k < len(out); {
		j := k + 1
		for j < len(out) && out[j] == out[j-1]+1 {
			j++
		}
		var excess float64
		var lost, clicks int64
		for _, i := range out[k:j] {
			excess += float64(d.r[i]) - p*float64(d.a[i])
			lost, clicks = lost+d.r[i], clicks+d.a[i]
		}
		explained := int64(math.Round(excess))
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
	d.leak(false)
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

// remainder names what no shape explained.
func (d *diagDay) remainder() {
	var explained int64
	for _, f := range d.found {
		explained += f.Clicks
	}
	rest := d.gap - explained
	if rest <= 0 || (rest < DiagMinClicks && len(d.found) > 0) {
		return
	}
	from, to := d.hourStart(0), d.hourStart(len(d.ev.Hours))
	d.found = append(d.found, Diagnosis{Kind: DiagUnexplained, From: from, To: to, Clicks: rest,
		Evidence: d.evidence(),
		Message:  fmt.Sprintf("%d of the day's %d differing clicks fit no shape (no outage, steady leak, busy-interval loss or duplicate): look at them in the hours of this day", rest, d.gap),
	})
}

func (d *diagDay) evidence() []string {
	if d.raw != nil {
		return []string{EvidenceRaw, EvidenceRows}
	}
	return []string{EvidenceHourly}
}

// wholeDay returns the day's links that lost clicks when a diagnosis
// explains the day's whole loss, else nil: hourly counts have no links.
func (d *diagDay) wholeDay(clicks int64) *int {
	var lost int64
	for _, h := range d.ev.Hours {
		lost += max(0, h.API-h.Local)
	}
	if d.ev.LinksLost == nil || clicks != lost {
		return nil
	}
	n := *d.ev.LinksLost
	return &n
}

// hourStart is the first instant of hour i, or the day's end for
// len(Hours).
func (d *diagDay) hourStart(i int) time.Time {
	if i < len(d.ev.Hours) {
		return d.ev.Hours[i].Start
	}
	_, end := d.ev.Date.Bounds(d.loc)
	return end
}

// rateWords says a lost fraction as a person reads it: "about 1 in 20
// clicks".
func rateWords(p float64) string {
	if p <= 0 {
		return "losing nothing"
	}
	return fmt.Sprintf("about 1 in %d clicks", int64(math.Round(1/p)))
}

func clock(t time.Time, loc *time.Location) string { return t.In(loc).Format("15:04:05 MST") }

// span writes a duration as minutes and seconds: "24 minutes", "3 h 5 min".
func span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return words.Plural(int(d/time.Second), "second", "seconds")
	case d < time.Hour:
		return words.Plural(int(d.Round(time.Minute)/time.Minute), "minute", "minutes")
	}
	m := int(d.Round(time.Minute) / time.Minute)
	if m%60 == 0 {
		return words.Plural(m/60, "hour", "hours")
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
