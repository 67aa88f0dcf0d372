package reconcile

import (
	"cmp"
	"fmt"
	"math"
	"slices"
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
