package reconcile

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// DayDetail is what the drill-down read for one day that differs. A nil
// map or slice means that part was not read.
type DayDetail struct {
	// APILinks is Elido's count per link. When LinksComplete is false it
	// holds only the links that were checked one by one (the fallback),
	// zeros included, and a link absent from it was not checked.
	APILinks      map[string]int64
	LinksComplete bool
	// UncheckedLinks is how many links the store knows that the fallback
	// had no request budget left for.
	UncheckedLinks int
	LocalLinks     map[string]int64

	APIHours   []HourCount // Elido's hourly buckets of the day
	LocalHours []HourCount // the store's, on the same hour starts

	APICountries   map[string]int64
	LocalCountries map[string]int64 // nil when the store has no country

	Notes []string // why a part was not read
}

// LinkDiff is one link whose counts differ on a day.
type LinkDiff struct {
	Date       Date
	LinkID     string
	API, Local int64
	Delta      int64
	Status     Status
}

// HourDiff is one hour of a day whose counts differ.
type HourDiff struct {
	Start      time.Time
	API, Local int64
	Delta      int64
}

// CountryCount is one country's counts on a day that differs. Local and
// Delta are nil when the store has no country.
type CountryCount struct {
	Date        Date
	CountryCode string
	API         int64
	Local       *int64
	Delta       *int64
}

// More finding kinds, from the drill-down and from looking across days.
const (
	FindingUnexplained    = "unexplained_remainder" // per-link rows do not add up to the day's delta
	FindingUnchecked      = "links_unchecked"       // the request budget ran out
	FindingGapWindow      = "gap_window"            // the gap sits in a few consecutive hours
	FindingGapSpread      = "gap_spread"            // the gap is spread over the day
	FindingBoundaryShift  = "day_boundary_shift"    // a deficit matched by a surplus next door
	FindingWindowBalances = "window_total_matches"  // days differ but the window adds up
	FindingSilentDay      = "silent_day"            // both sides 0 while other days were busy
	FindingDrilldownGap   = "drilldown_incomplete"  // a part of the drill-down could not be read
)

// Explain adds the drill-down to a comparison: the links and countries of
// each day that differs, the hours where its gap sits, and what only shows
// across days. details holds the days that were drilled into.
func Explain(res Result, details map[Date]DayDetail, loc *time.Location) Result {
	res.Days = append([]DayResult(nil), res.Days...)
	hourFindings := map[Date]Finding{}
	for i, d := range res.Days {
		det, ok := details[d.Date]
		if !ok || d.Delta == nil {
			continue
		}
		links := CompareLinks(d.Date, det.APILinks, det.LocalLinks, det.LinksComplete)
		res.Links = append(res.Links, links...)
		res.Findings = append(res.Findings, linkFindings(d, det, links)...)
		res.Days[i].HoursWithGap = CompareHours(det.APIHours, det.LocalHours)
		if f, ok := hourFinding(d, res.Days[i].HoursWithGap, len(det.APIHours), loc); ok {
			hourFindings[d.Date] = f
		}
		res.Countries = append(res.Countries, compareCountries(d.Date, det.APICountries, det.LocalCountries)...)
		for _, n := range det.Notes {
			res.Findings = append(res.Findings, Finding{Kind: FindingDrilldownGap, Message: d.Date.String() + ": " + n})
		}
	}
	across, shifted := acrossDays(res, details, loc)
	// Where the gap sits in a day whose clicks moved across midnight says
	// nothing of a leak or an outage: the shift finding explains it.
	for _, d := range res.Days {
		if f, ok := hourFindings[d.Date]; ok && !shifted[d.Date] {
			res.Findings = append(res.Findings, f)
		}
	}
	res.Findings = append(res.Findings, across...)
	return res
}

// CompareLinks returns the links whose counts differ on day d, the
// largest |delta| first. When complete is false, only the links in api
// were checked and the others are left out rather than assumed to match.
func CompareLinks(d Date, api, local map[string]int64, complete bool) []LinkDiff {
	if api == nil {
		return nil
	}
	ids := map[string]bool{}
	for id := range api {
		ids[id] = true
	}
	if complete {
		for id := range local {
			ids[id] = true
		}
	}
	var out []LinkDiff
	for id := range ids {
		a, l := api[id], local[id]
		if a == l {
			continue
		}
		st := Surplus
		if l < a {
			st = Missing
		}
		out = append(out, LinkDiff{Date: d, LinkID: id, API: a, Local: l, Delta: l - a, Status: st})
	}
	sort.Slice(out, func(i, j int) bool {
		if ai, aj := abs64(out[i].Delta), abs64(out[j].Delta); ai != aj {
			return ai > aj
		}
		return out[i].LinkID < out[j].LinkID
	})
	return out
}

func linkFindings(d DayResult, det DayDetail, links []LinkDiff) []Finding {
	if det.APILinks == nil {
		return nil
	}
	var out []Finding
	var explained int64
	for _, l := range links {
		explained += l.Delta
	}
	if rest := *d.Delta - explained; rest != 0 {
		why := "Elido's per-link counts do not add up to its daily count"
		if !det.LinksComplete {
			why = "they are on links the store has never recorded, or on links left unchecked"
		}
		out = append(out, Finding{Kind: FindingUnexplained, Message: fmt.Sprintf(
			"%s: %+d of the day's %+d clicks are not explained per link: %s", d.Date, rest, *d.Delta, why)})
	}
	if det.UncheckedLinks > 0 {
		out = append(out, Finding{Kind: FindingUnchecked, Message: fmt.Sprintf(
			"%s: %d links were not checked one by one (RECON_DRILLDOWN_MAX_REQUESTS ran out); nothing is known of them, they are not implied to match",
			d.Date, det.UncheckedLinks)})
	}
	return out
}

// CompareHours pairs Elido's and the store's hourly buckets and returns
// the hours that differ. Either side may be nil (not read): then there is
// nothing to compare.
func CompareHours(api, local []HourCount) []HourDiff {
	if api == nil || local == nil {
		return nil
	}
	byStart := map[int64]int64{}
	for _, h := range local {
		byStart[h.Start.UnixNano()] += h.Clicks
	}
	var out []HourDiff
	seen := map[int64]bool{}
	for _, h := range api {
		k := h.Start.UnixNano()
		seen[k] = true
		if l := byStart[k]; l != h.Clicks {
			out = append(out, HourDiff{Start: h.Start, API: h.Clicks, Local: l, Delta: l - h.Clicks})
		}
	}
	for _, h := range local {
		if !seen[h.Start.UnixNano()] && h.Clicks != 0 {
			out = append(out, HourDiff{Start: h.Start, Local: h.Clicks, Delta: h.Clicks})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// hourFinding says where in the day a gap sits: in a short run of
// consecutive hours holding most of it (an outage), or spread over the day
// (a steady leak).
func hourFinding(d DayResult, hours []HourDiff, dayHours int, loc *time.Location) (Finding, bool) {
	if len(hours) == 0 || d.Delta == nil || *d.Delta == 0 {
		return Finding{}, false
	}
	total := abs64(*d.Delta)
	// On a DST day a wall-clock hour can happen twice: name the zone's
	// abbreviation too (02:00 CEST, 02:00 CET).
	clock := "15:04"
	if dayHours != 24 {
		clock = "15:04 MST"
	}
	// The run of consecutive hours holding the most of the gap.
	bestStart, bestEnd, bestSum := 0, 0, int64(0)
	for i := 0; i < len(hours); {
		j, sum := i, abs64(hours[i].Delta)
		for j+1 < len(hours) && hours[j+1].Start.Sub(hours[j].Start) <= time.Hour {
			j++
			sum += abs64(hours[j].Delta)
		}
		if sum > bestSum {
			bestStart, bestEnd, bestSum = i, j, sum
		}
		i = j + 1
	}
	runHours := bestEnd - bestStart + 1
	if runHours <= 6 && float64(bestSum) >= 0.8*float64(total) {
		from := hours[bestStart].Start.In(loc)
		to := hours[bestEnd].Start.Add(time.Hour).In(loc)
		return Finding{Kind: FindingGapWindow, Message: fmt.Sprintf(
			"%s: the gap is %s–%s (%s): %+d of the day's %+d clicks; the other hours match%s",
			d.Date, from.Format(clock), to.Format(clock), loc, sumDelta(hours[bestStart:bestEnd+1]), *d.Delta,
			unlessOthers(len(hours), runHours))}, true
	}
	if dayHours > 0 && len(hours)*2 >= dayHours {
		return Finding{Kind: FindingGapSpread, Message: fmt.Sprintf(
			"%s: the gap is spread over the day: %d of %d hours differ, the largest by %+d; a steady leak (a handler dropping or repeating a share of events) rather than an outage",
			d.Date, len(hours), dayHours, largest(hours))}, true
	}
	var parts []string
	for _, h := range hours {
		parts = append(parts, fmt.Sprintf("%s %+d", h.Start.In(loc).Format(clock), h.Delta))
	}
	return Finding{Kind: FindingGapWindow, Message: fmt.Sprintf("%s: the gap is in %d hours (%s): %s",
		d.Date, len(hours), loc, strings.Join(parts, ", "))}, true
}

func unlessOthers(all, run int) string {
	if all == run {
		return ""
	}
	return fmt.Sprintf(" (%d other hours differ a little)", all-run)
}

func sumDelta(hs []HourDiff) int64 {
	var s int64
	for _, h := range hs {
		s += h.Delta
	}
	return s
}

func largest(hs []HourDiff) int64 {
	var m int64
	for _, h := range hs {
		if abs64(h.Delta) > abs64(m) {
			m = h.Delta
		}
	}
	return m
}

func compareCountries(d Date, api, local map[string]int64) []CountryCount {
	if api == nil {
		return nil
	}
	codes := map[string]bool{}
	for c := range api {
		codes[c] = true
	}
	for c := range local {
		codes[c] = true
	}
	var out []CountryCount
	for c := range codes {
		row := CountryCount{Date: d, CountryCode: c, API: api[c]}
		if local != nil {
			row.Local, row.Delta = ptr(local[c]), ptr(local[c]-api[c])
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := int64(0), int64(0)
		if out[i].Delta != nil {
			di, dj = abs64(*out[i].Delta), abs64(*out[j].Delta)
		}
		if di != dj {
			return di > dj
		}
		if out[i].API != out[j].API {
			return out[i].API > out[j].API
		}
		return out[i].CountryCode < out[j].CountryCode
	})
	return out
}

// acrossDays finds what only shows when days are read together: a
// deficit on one day matched by a surplus on the next (a day boundary or
// time zone mismatch, not data loss), a window that adds up while its days
// do not, and a silent day among busy ones. It also returns the days a
// boundary shift explains.
func acrossDays(res Result, details map[Date]DayDetail, loc *time.Location) ([]Finding, map[Date]bool) {
	var out []Finding
	paired := map[Date]bool{}
	for i := 0; i+1 < len(res.Days); i++ {
		a, b := res.Days[i], res.Days[i+1]
		if !a.IsGap() || !b.IsGap() || a.Status == b.Status || paired[a.Date] {
			continue
		}
		if msg, ok := boundaryShift(a, b, details, loc); ok {
			paired[a.Date], paired[b.Date] = true, true
			out = append(out, Finding{Kind: FindingBoundaryShift, Message: msg})
		}
	}

	// The window adding up while its days do not points at day
	// boundaries, unless a shift was already found above, the gaps are a
	// handful of clicks (an unrelated loss and duplicate cancel by
	// chance), or the hourly counts of those days were compared and showed
	// no shift.
	var differing int
	var moved int64
	hourlyRefutes := false
	for _, d := range res.Days {
		if !d.IsGap() {
			continue
		}
		differing++
		moved += abs64(*d.Delta)
		det := details[d.Date]
		if det.APIHours != nil && det.LocalHours != nil {
			hourlyRefutes = true
		}
	}
	if len(out) == 0 && differing >= 2 && moved >= 2*minShifted && !hourlyRefutes && abs64(res.Totals.Delta) <= max(1, res.Totals.API/1000) {
		out = append(out, Finding{Kind: FindingWindowBalances, Message: fmt.Sprintf(
			"%d days differ but the window's totals match (delta %+d of %d): the clicks are there, counted on other days; check the store's day boundaries and time zone before looking for lost data",
			differing, res.Totals.Delta, res.Totals.API)})
	}

	for i, d := range res.Days {
		if d.API == nil || d.Local == nil || *d.API != 0 || *d.Local != 0 {
			continue
		}
		var busy []int64
		for j, o := range res.Days {
			if j != i && o.API != nil {
				busy = append(busy, *o.API)
			}
		}
		if len(busy) < 2 {
			continue
		}
		if avg := mean(busy); avg >= 20 {
			out = append(out, Finding{Kind: FindingSilentDay, Message: fmt.Sprintf(
				"%s has no clicks on either side while the other days average %.0f: both sides agree, but check that links, the Elido workspace and the integration were up",
				d.Date, avg)})
		}
	}
	return out, paired
}

// minShifted is the fewest clicks that must cross midnight before a pair
// of opposite gaps is called a boundary shift on daily counts: below it, an
// unrelated loss and duplicate cancel by chance too easily.
const minShifted = 10

// maxShift bounds the offsets tried, in whole hours either way.
const maxShift = 14

// boundaryShift decides whether a's and b's opposite gaps are clicks
// counted on the wrong side of midnight. With both sides' hourly counts it
// looks for the offset that lines the store's hours up with Elido's.
// Without the store's hours it needs the two gaps to nearly cancel and
// enough clicks, and then estimates the offset from Elido's hours around
// the days (details may hold the days next to a and b with APIHours only).
func boundaryShift(a, b DayResult, details map[Date]DayDetail, loc *time.Location) (string, bool) {
	da, db := details[a.Date], details[b.Date]
	dA, dB := *a.Delta, *b.Delta
	moved := min(abs64(dA), abs64(dB))
	lead := fmt.Sprintf("%s is %+d and %s is %+d: about %d clicks are counted on the wrong side of midnight, a day-boundary or time zone mismatch (the store's days are not calendar days in %s), not lost data",
		a.Date, dA, b.Date, dB, moved, loc)
	if da.LocalHours != nil && db.LocalHours != nil && da.APIHours != nil && db.APIHours != nil {
		shift, ok := hourShift(append(append([]HourCount(nil), da.APIHours...), db.APIHours...),
			append(append([]HourCount(nil), da.LocalHours...), db.LocalHours...))
		if !ok {
			return "", false
		}
		dir := "later"
		if shift < 0 {
			dir = "earlier"
		}
		return fmt.Sprintf("%s; the store's hourly counts match Elido's %s %s, as if its timestamps were %s %s (a zone or offset error where clicks are written)",
			lead, shortDuration(absDuration(shift)), dir, shortDuration(absDuration(shift)), dir), true
	}
	if moved < minShifted || float64(abs64(dA+dB)) > 0.2*float64(max(abs64(dA), abs64(dB))) {
		return "", false
	}
	shift, ok := predictedShift([]DayResult{a, b}, details, loc)
	if !ok {
		return lead + " (Elido's hourly counts around these days were not all read, so the offset is not estimated)", true
	}
	dir := "early"
	if shift < 0 {
		dir = "late"
	}
	return fmt.Sprintf("%s; the store's days likely run %s %s: counting Elido's clicks over days shifted so explains both gaps (a store that buckets days in UTC, or in a zone %s from %s)",
		lead, shortDuration(absDuration(shift)), dir, shortDuration(absDuration(shift)), loc), true
}

// predictedShift finds the whole-hour offset s for which days that run
// from start−s to end−s (s > 0: s hours early) would show the gaps
// observed, counting Elido's hourly clicks. It needs Elido's hours for the
// days and the ones next to them, and a fit within a fifth of the gaps.
func predictedShift(days []DayResult, details map[Date]DayDetail, loc *time.Location) (time.Duration, bool) {
	at := map[int64]int64{}
	for _, det := range details {
		for _, h := range det.APIHours {
			at[h.Start.Unix()] += h.Clicks
		}
	}
	// sum counts Elido's clicks in [from, to), or says an hour is missing.
	sum := func(from, to time.Time) (int64, bool) {
		var n int64
		for t := from; t.Before(to); t = t.Add(time.Hour) {
			c, ok := at[t.Unix()]
			if !ok {
				return 0, false
			}
			n += c
		}
		return n, true
	}
	var observed int64
	for _, d := range days {
		observed += abs64(*d.Delta)
	}
	best, bestMisfit := time.Duration(0), int64(math.MaxInt64)
	for h := -maxShift; h <= maxShift; h++ {
		if h == 0 {
			continue
		}
		s := time.Duration(h) * time.Hour
		var misfit int64
		complete := true
		for _, d := range days {
			start, end := d.Date.Bounds(loc)
			gained, ok1 := sum(start.Add(-s), start)
			lost, ok2 := sum(end.Add(-s), end)
			if s < 0 {
				gained, ok1 = sum(end, end.Add(-s))
				lost, ok2 = sum(start, start.Add(-s))
			}
			if !ok1 || !ok2 {
				complete = false
				break
			}
			misfit += abs64(*d.Delta - (gained - lost))
		}
		if complete && misfit < bestMisfit {
			best, bestMisfit = s, misfit
		}
	}
	if best == 0 || float64(bestMisfit) > 0.2*float64(observed) {
		return 0, false
	}
	return best, true
}

// hourShift finds the whole-hour offset s (up to 14 h either way) for
// which the store's hour t holds what Elido counted in hour t−s, over the
// hours both series cover. It needs the shifted series to fit far better
// than the unshifted one.
func hourShift(api, local []HourCount) (time.Duration, bool) {
	apiAt := map[int64]int64{}
	localAt := map[int64]int64{}
	for _, h := range api {
		apiAt[h.Start.Unix()] += h.Clicks
	}
	for _, h := range local {
		localAt[h.Start.Unix()] += h.Clicks
	}
	misfit := func(s time.Duration) (sum int64, n int) {
		for t, l := range localAt {
			if a, ok := apiAt[t-int64(s/time.Second)]; ok {
				sum += abs64(l - a)
				n++
			}
		}
		return sum, n
	}
	base, _ := misfit(0)
	best, bestMisfit := time.Duration(0), base
	for h := -14; h <= 14; h++ {
		s := time.Duration(h) * time.Hour
		if h == 0 {
			continue
		}
		m, n := misfit(s)
		if n >= 12 && m < bestMisfit {
			best, bestMisfit = s, m
		}
	}
	if best == 0 || bestMisfit*4 > base {
		return 0, false
	}
	return best, true
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func mean(xs []int64) float64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return float64(s) / float64(len(xs))
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
