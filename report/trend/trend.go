// Package trend puts the nights side by side: for each calendar day of a
// range, the latest verdict the runs gave it, and the sums of those
// verdicts by ISO week and by month, with the clicks lost by diagnosis
// kind. A day checked by several runs (every nightly run re-checks the
// last few days) counts once, by its latest verdict.
//
// It reads nothing itself: a caller adds the runs' reports one at a time
// (Add), in any order, and the trend keeps only one verdict per day, so
// its memory grows with the days of the range, never with the runs.
package trend

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
)

// Key names one series: the runs of a workspace against one store, in
// one zone. Runs of other stores or zones are other series: their days
// are other days.
type Key struct {
	WorkspaceID string `json:"workspace_id"`
	StoreID     string `json:"store_id"`
	TZ          string `json:"tz"`
}

// Day is one calendar day's latest verdict.
type Day struct {
	Date string `json:"date"`
	// Checked says some run's report holds the day; the fields below are
	// empty when it is false (no run checked the day: a night missed).
	Checked bool `json:"checked"`
	// RunKey and GeneratedAt name the run whose verdict this is.
	RunKey      string           `json:"run_key,omitempty"`
	GeneratedAt *time.Time       `json:"generated_at,omitempty"`
	Status      reconcile.Status `json:"status,omitempty"`
	API         *int64           `json:"api"`
	Local       *int64           `json:"local"`
	// Missing and Surplus are the clicks of a settled gap: Elido's count
	// less the store's on a missing day, the store's less Elido's on a
	// surplus one; 0 on every other day.
	Missing int64 `json:"missing"`
	Surplus int64 `json:"surplus"`
	// Loss is the clicks of the day's diagnoses, by kind (outage,
	// steady_leak, busy_intervals, duplicates, unexplained), as the
	// verdict's report explains the gap.
	Loss map[string]int64 `json:"loss,omitempty"`
	// Checks is how many runs' reports hold the day.
	Checks int `json:"checks"`
	// Found is when the first report that showed the day as a settled
	// gap was made; Healed, for a day whose latest verdict is match, when
	// the first report that showed it matching after its last gap was
	// made (a late receiver, Elido's late data, or a repair). The
	// history's alerts say when Slack heard of it; the reports say when
	// clickrecon knew.
	Found  *time.Time `json:"found,omitempty"`
	Healed *time.Time `json:"healed,omitempty"`
	// WasMissing and WasSurplus are the gap of a healed day, as the last
	// report that showed it said.
	WasMissing int64 `json:"was_missing,omitempty"`
	WasSurplus int64 `json:"was_surplus,omitempty"`
	// Alerted is when Slack was first told of the day's gap, and
	// HealTold when it was told the day healed, as the history keeps them
	// (read from the history only).
	Alerted  *time.Time `json:"alerted,omitempty"`
	HealTold *time.Time `json:"heal_told,omitempty"`
	// Restored is the clicks the runs' repair stage (REPAIR=apply) put
	// back into the store on the day, over every run that repaired it
	// (each run's report says what its own repair inserted), and
	// Repaired when the first of those runs was made.
	Restored int64      `json:"restored"`
	Repaired *time.Time `json:"repaired,omitempty"`
}

// ToFind is how long after the day ended its gap was first found, and
// ToHeal how long after it ended it was first seen healed, in loc; false
// when the day was not found, or not healed.
func (d Day) ToFind(loc *time.Location) (time.Duration, bool) {
	if d.Found == nil {
		return 0, false
	}
	return d.Found.Sub(d.end(loc)), true
}

// ToRepair is how long after the day ended a run first repaired it.
func (d Day) ToRepair(loc *time.Location) (time.Duration, bool) {
	if d.Repaired == nil {
		return 0, false
	}
	return d.Repaired.Sub(d.end(loc)), true
}

// ToHeal is how long after the day ended it was first seen healed.
func (d Day) ToHeal(loc *time.Location) (time.Duration, bool) {
	if d.Healed == nil {
		return 0, false
	}
	return d.Healed.Sub(d.end(loc)), true
}

func (d Day) end(loc *time.Location) time.Time {
	date, _ := reconcile.ParseDate(d.Date)
	return date.AddDays(1).Start(loc)
}

// Period is the sum of a week's or a month's days.
type Period struct {
	Name string `json:"name"` // 2026-W49, or 2026-12
	From string `json:"from"` // its first day in the range
	To   string `json:"to"`   // its last day in the range
	Days int    `json:"days"` // its days in the range
	// Checked, Match, Gaps, Provisional and Unverifiable count its days
	// by their verdict; Unchecked the days no run checked.
	Checked      int              `json:"checked"`
	Match        int              `json:"match"`
	Gaps         int              `json:"gaps"`
	Provisional  int              `json:"provisional"`
	Unverifiable int              `json:"unverifiable"`
	Unchecked    int              `json:"unchecked"`
	API          int64            `json:"api"`   // Elido's clicks on its checked days with a count
	Local        int64            `json:"local"` // the store's, on the same days
	Missing      int64            `json:"missing"`
	Surplus      int64            `json:"surplus"`
	Restored     int64            `json:"restored"` // by the runs' repairs
	Loss         map[string]int64 `json:"loss,omitempty"`
}

// LossRate is the share of Elido's clicks the store missed over the
// period's days, 0 when Elido counted none.
func (p Period) LossRate() float64 {
	if p.API == 0 {
		return 0
	}
	return float64(p.Missing) / float64(p.API)
}

// Cause is one diagnosis kind over the range: the clicks it explains and
// on how many days.
type Cause struct {
	Kind   string `json:"kind"`
	Clicks int64  `json:"clicks"`
	Days   int    `json:"days"`
}

// Series is the trend of one Key over the range.
type Series struct {
	Key
	From   string   `json:"from"`
	To     string   `json:"to"`
	Days   []Day    `json:"days"`
	Weeks  []Period `json:"weeks"`
	Months []Period `json:"months"`
	Total  Period   `json:"total"`
	// Causes are the diagnosis kinds, the most clicks first.
	Causes []Cause `json:"causes"`
	// Runs is how many runs' reports were read for the series.
	Runs int `json:"runs"`
	// ToFind and ToHeal are how long after their day ended the range's
	// gaps were first found, and first seen healed.
	ToFind Times `json:"to_find"`
	ToHeal Times `json:"to_heal"`
	// ToRepair is how long after their day ended a run's repair first
	// put the days' clicks back.
	ToRepair Times `json:"to_repair"`
	// ToAlert is how long after their day ended Slack was first told of
	// the gaps (from the history's alerts; empty from reports alone).
	ToAlert Times `json:"to_alert"`
	// Worse says how the last nights of the range got worse (Worse);
	// empty when they did not.
	Worse []Signal `json:"worse"`
}

// Times sums up how long something took for the days it happened on:
// their count, the median and the worst (with its day), in hours.
type Times struct {
	Days        int     `json:"days"`
	MedianHours float64 `json:"median_hours"`
	WorstHours  float64 `json:"worst_hours"`
	WorstDate   string  `json:"worst_date,omitempty"`
}

// timesOf sums up the durations of days, by date.
func timesOf(ds map[string]time.Duration) Times {
	if len(ds) == 0 {
		return Times{}
	}
	dates := slices.Sorted(maps.Keys(ds))
	hours := make([]float64, 0, len(ds))
	t := Times{Days: len(ds), WorstHours: math.Inf(-1)}
	for _, date := range dates {
		h := ds[date].Hours()
		hours = append(hours, h)
		if h > t.WorstHours {
			t.WorstHours, t.WorstDate = h, date
		}
	}
	slices.Sort(hours)
	if n := len(hours); n%2 == 1 {
		t.MedianHours = hours[n/2]
	} else {
		t.MedianHours = (hours[n/2-1] + hours[n/2]) / 2
	}
	t.MedianHours, t.WorstHours = math.Round(t.MedianHours*100)/100, math.Round(t.WorstHours*100)/100
	return t
}

// Trend gathers the verdicts of the days from From to To, inclusive.
type Trend struct {
	from, to reconcile.Date
	series   map[Key]*gathered
}

type gathered struct {
	runs   int
	alerts map[reconcile.Date]history.AlertTimes
	days   map[reconcile.Date]*Day
	// seen are the verdicts every run gave each day, for when its gap was
	// found and healed: as many as the runs that checked the day.
	seen map[reconcile.Date][]seen
	// restored and repaired are each day's clicks put back by the runs'
	// repairs, and when the first of those runs was made.
	restored map[reconcile.Date]int64
	repaired map[reconcile.Date]time.Time
}

// seen is one run's verdict of a day.
type seen struct {
	at               time.Time
	runKey           string
	status           reconcile.Status
	missing, surplus int64
}

// New returns an empty trend of the days from from to to, inclusive.
func New(from, to reconcile.Date) (*Trend, error) {
	if to.Before(from) {
		return nil, fmt.Errorf("the trend's range ends (%s) before it starts (%s)", to, from)
	}
	return &Trend{from: from, to: to, series: map[Key]*gathered{}}, nil
}

// Covers reports whether a report of window w may hold a day of the
// range: a caller need not read one that cannot.
func (t *Trend) Covers(w report.Window) bool {
	from, err1 := reconcile.ParseDate(w.From)
	to, err2 := reconcile.ParseDate(w.To)
	if err1 != nil || err2 != nil {
		return true // read it: Add says what is wrong with it
	}
	return !to.Before(t.from) && !t.to.Before(from)
}

// Add takes the verdicts of rep's days in the range. Each day keeps the
// verdict of the latest run that compared it (match, missing or surplus);
// a run that could not (unverifiable) or whose day had not settled
// (provisional) gives the day its verdict only when no run compared it.
// Runs are ordered by when their report was made, then by run key, so
// the order they are added in does not matter.
func (t *Trend) Add(rep report.Report) error {
	k := Key{WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ}
	g := t.series[k]
	if g == nil {
		g = &gathered{days: map[reconcile.Date]*Day{}, seen: map[reconcile.Date][]seen{},
			restored: map[reconcile.Date]int64{}, repaired: map[reconcile.Date]time.Time{}}
		t.series[k] = g
	}
	g.runs++
	loss := map[string]map[string]int64{}
	for _, d := range rep.Diagnoses {
		if loss[d.Date] == nil {
			loss[d.Date] = map[string]int64{}
		}
		loss[d.Date][d.Kind] += d.Clicks
	}
	for _, rd := range rep.Days {
		date, err := reconcile.ParseDate(rd.Date)
		if err != nil {
			return fmt.Errorf("report %s: day %q: %w", rep.RunKey, rd.Date, err)
		}
		if date.Before(t.from) || t.to.Before(date) {
			continue
		}
		at := rep.GeneratedAt
		if rd.Repaired > 0 {
			g.restored[date] += rd.Repaired
			if first, ok := g.repaired[date]; !ok || at.Before(first) {
				g.repaired[date] = at
			}
		}
		v := Day{Date: rd.Date, Checked: true, RunKey: rep.RunKey, GeneratedAt: &at, Status: rd.Status,
			API: rd.API, Local: rd.Local, Loss: loss[rd.Date]}
		if rd.API != nil && rd.Local != nil {
			switch rd.Status {
			case reconcile.Missing:
				v.Missing = *rd.API - *rd.Local
			case reconcile.Surplus:
				v.Surplus = *rd.Local - *rd.API
			}
		}
		g.seen[date] = append(g.seen[date], seen{at: at, runKey: rep.RunKey, status: rd.Status, missing: v.Missing, surplus: v.Surplus})
		old := g.days[date]
		if old == nil {
			v.Checks = 1
			g.days[date] = &v
			continue
		}
		v.Checks = old.Checks + 1
		if later(v, *old) {
			*old = v
		} else {
			old.Checks = v.Checks
		}
	}
	return nil
}

// foldUnidentified moves the runs of each series of no store into the one
// series of a store of the same workspace and zone, if there is exactly
// one.
func (t *Trend) foldUnidentified() {
	for k, g := range t.series {
		if k.StoreID != "" {
			continue
		}
		var into []Key
		for o := range t.series {
			if o.StoreID != "" && o.WorkspaceID == k.WorkspaceID && o.TZ == k.TZ {
				into = append(into, o)
			}
		}
		if len(into) == 1 {
			t.series[into[0]].merge(g)
			delete(t.series, k)
		}
	}
}

// merge adds o's runs to g's, as if each had been added to g.
func (g *gathered) merge(o *gathered) {
	g.runs += o.runs
	for d, v := range o.days {
		old := g.days[d]
		if old == nil {
			c := *v
			g.days[d] = &c
			continue
		}
		checks := old.Checks + v.Checks
		if later(*v, *old) {
			*old = *v
		}
		old.Checks = checks
	}
	for d, ss := range o.seen {
		g.seen[d] = append(g.seen[d], ss...)
	}
	for d, n := range o.restored {
		g.restored[d] += n
	}
	for d, at := range o.repaired {
		if first, ok := g.repaired[d]; !ok || at.Before(first) {
			g.repaired[d] = at
		}
	}
	for d, a := range o.alerts {
		if g.alerts == nil {
			g.alerts = map[reconcile.Date]history.AlertTimes{}
		}
		if _, ok := g.alerts[d]; !ok {
			g.alerts[d] = a
		}
	}
}

// rank orders verdicts: a comparison made beats a day not yet settled,
// which beats a day that could not be compared.
func rank(s reconcile.Status) int {
	switch s {
	case reconcile.Match, reconcile.Missing, reconcile.Surplus:
		return 2
	case reconcile.Provisional:
		return 1
	}
	return 0
}

// later reports whether verdict a wins over b (see Add).
func later(a, b Day) bool {
	if ra, rb := rank(a.Status), rank(b.Status); ra != rb {
		return ra > rb
	}
	if c := a.GeneratedAt.Compare(*b.GeneratedAt); c != 0 {
		return c > 0
	}
	return a.RunKey > b.RunKey
}

// Series returns the trend of every series that had a run, ordered by
// workspace, store and zone. The runs of a store not identified (a report
// whose store_id is "": its store could not be opened or asked what it
// is) count as runs of the one store their workspace read in their zone,
// when it read one: the history's runs recorded before it kept their
// store are read so too.
func (t *Trend) Series() []Series {
	t.foldUnidentified()
	keys := slices.SortedFunc(maps.Keys(t.series), func(a, b Key) int {
		return strings.Compare(a.WorkspaceID+"\x00"+a.StoreID+"\x00"+a.TZ, b.WorkspaceID+"\x00"+b.StoreID+"\x00"+b.TZ)
	})
	out := make([]Series, 0, len(keys))
	for _, k := range keys {
		out = append(out, t.one(k, t.series[k]))
	}
	return out
}

func (t *Trend) one(k Key, g *gathered) Series {
	s := Series{Key: k, From: t.from.String(), To: t.to.String(), Runs: g.runs}
	s.Total = Period{Name: "total", From: s.From, To: s.To}
	causes := map[string]*Cause{}
	loc, err := time.LoadLocation(k.TZ)
	if err != nil {
		loc = time.UTC // a report's zone was valid where it was written
	}
	toFind, toHeal, toAlert, toRepair := map[string]time.Duration{}, map[string]time.Duration{}, map[string]time.Duration{}, map[string]time.Duration{}
	var week, month *Period
	for d := t.from; !t.to.Before(d); d = d.AddDays(1) {
		day := Day{Date: d.String()}
		if v := g.days[d]; v != nil {
			day = *v
			day.Found, day.Healed, day.WasMissing, day.WasSurplus = foundHealed(day, g.seen[d])
		}
		if n := g.restored[d]; n > 0 {
			at := g.repaired[d]
			day.Restored, day.Repaired = n, &at
		}
		if a, ok := g.alerts[d]; ok {
			at := a.Alerted
			day.Alerted = &at
			if !a.Healed.IsZero() {
				told := a.Healed
				day.HealTold = &told
			}
		}
		s.Days = append(s.Days, day)
		if t, ok := day.ToFind(loc); ok {
			toFind[day.Date] = t
		}
		if t, ok := day.ToHeal(loc); ok {
			toHeal[day.Date] = t
		}
		if day.Alerted != nil {
			toAlert[day.Date] = day.Alerted.Sub(day.end(loc))
		}
		if t, ok := day.ToRepair(loc); ok {
			toRepair[day.Date] = t
		}
		y, w := d.Start(time.UTC).ISOWeek()
		if name := fmt.Sprintf("%04d-W%02d", y, w); week == nil || week.Name != name {
			s.Weeks = append(s.Weeks, Period{Name: name, From: day.Date})
			week = &s.Weeks[len(s.Weeks)-1]
		}
		if name := day.Date[:7]; month == nil || month.Name != name {
			s.Months = append(s.Months, Period{Name: name, From: day.Date})
			month = &s.Months[len(s.Months)-1]
		}
		for _, p := range []*Period{week, month, &s.Total} {
			p.add(day)
		}
		for kind, n := range day.Loss {
			c := causes[kind]
			if c == nil {
				c = &Cause{Kind: kind}
				causes[kind] = c
			}
			c.Clicks += n
			c.Days++
		}
	}
	s.ToFind, s.ToHeal, s.ToAlert, s.ToRepair = timesOf(toFind), timesOf(toHeal), timesOf(toAlert), timesOf(toRepair)
	s.Worse = Worse(s)
	for _, c := range causes {
		s.Causes = append(s.Causes, *c)
	}
	slices.SortFunc(s.Causes, func(a, b Cause) int {
		if a.Clicks != b.Clicks {
			if a.Clicks > b.Clicks {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return s
}

// foundHealed reads a day's verdicts in the order the runs were made:
// when its gap was first found and, when its latest verdict is a match,
// when it was first seen healed after its last gap, and what that gap was.
func foundHealed(day Day, ss []seen) (found, healed *time.Time, wasMissing, wasSurplus int64) {
	ss = slices.Clone(ss)
	slices.SortFunc(ss, func(a, b seen) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.runKey, b.runKey)
	})
	lastGap := -1
	for i, s := range ss {
		if s.status == reconcile.Missing || s.status == reconcile.Surplus {
			if found == nil {
				at := s.at
				found = &at
			}
			lastGap = i
		}
	}
	if day.Status != reconcile.Match || lastGap < 0 {
		return found, nil, 0, 0
	}
	for _, s := range ss[lastGap+1:] {
		if s.status == reconcile.Match {
			at := s.at
			return found, &at, ss[lastGap].missing, ss[lastGap].surplus
		}
	}
	return found, nil, 0, 0
}

// add counts day in p.
func (p *Period) add(day Day) {
	p.To = day.Date
	p.Days++
	p.Restored += day.Restored
	if !day.Checked {
		p.Unchecked++
		return
	}
	p.Checked++
	switch day.Status {
	case reconcile.Match:
		p.Match++
	case reconcile.Missing, reconcile.Surplus:
		p.Gaps++
	case reconcile.Provisional:
		p.Provisional++
	default:
		p.Unverifiable++
	}
	if day.API != nil && day.Local != nil {
		p.API += *day.API
		p.Local += *day.Local
	}
	p.Missing += day.Missing
	p.Surplus += day.Surplus
	for kind, n := range day.Loss {
		if p.Loss == nil {
			p.Loss = map[string]int64{}
		}
		p.Loss[kind] += n
	}
}

// MaxDays is the longest range a trend reads: ten years of nights.
const MaxDays = 3660

// Range is the range of days from fromS to toS (YYYY-MM-DD), or, when
// fromS is empty, the nightsS days (90 when empty) ending at toS, which
// is the day before now's (in now's location) when empty. An error says
// which value to fix.
func Range(fromS, toS, nightsS string, now time.Time) (from, to reconcile.Date, err error) {
	to = reconcile.DateOf(now).AddDays(-1)
	if toS != "" {
		if to, err = reconcile.ParseDate(toS); err != nil {
			return from, to, fmt.Errorf("to: %w", err)
		}
	}
	nights := 90
	if nightsS != "" {
		if nights, err = strconv.Atoi(nightsS); err != nil || nights < 1 || nights > MaxDays {
			return from, to, fmt.Errorf("nights must be a whole number from 1 to %d, got %q", MaxDays, nightsS)
		}
	}
	from = to.AddDays(-(nights - 1))
	if fromS != "" {
		if from, err = reconcile.ParseDate(fromS); err != nil {
			return from, to, fmt.Errorf("from: %w", err)
		}
	}
	if to.Before(from) {
		return from, to, fmt.Errorf("to %s is before from %s", to, from)
	}
	if to.Compare(from.AddDays(MaxDays-1)) > 0 {
		return from, to, fmt.Errorf("from %s to %s is longer than %d days", from, to, MaxDays)
	}
	return from, to, nil
}

// AddAlerts takes when Slack was told of the range's alerted days (the
// history's alerts), for each day's time to alert and to tell its heal.
func (t *Trend) AddAlerts(alerts []history.AlertTimes) {
	for _, a := range alerts {
		d, err := reconcile.ParseDate(a.Day)
		if err != nil || d.Before(t.from) || t.to.Before(d) {
			continue
		}
		g := t.series[Key{WorkspaceID: a.WorkspaceID, StoreID: a.StoreID, TZ: a.TZ}]
		if g == nil {
			continue // a store with no run in the range
		}
		if g.alerts == nil {
			g.alerts = map[reconcile.Date]history.AlertTimes{}
		}
		g.alerts[d] = a
	}
}
