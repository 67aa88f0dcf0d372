package reconcile

import (
	"fmt"
	"math"
	"time"
)

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
	// A store read in the wrong zone moves every day's last hours to the
	// next day: with traffic alike from day to day, most days still match
	// and a gap has no opposite gap next to it. Its own hours show it.
	for _, d := range res.Days {
		if !d.IsGap() || paired[d.Date] {
			continue
		}
		if msg, ok := dayShift(d, details); ok {
			paired[d.Date] = true
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
		return fmt.Sprintf("%s; the store's hourly counts match Elido's %s %s, as if its timestamps were %s %s (a zone or offset error where clicks are written%s)",
			lead, shortDuration(absDuration(shift)), dir, shortDuration(absDuration(shift)), dir, zoneFix), true
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

// zoneFix is the likely fix of a store whose hours are shifted.
const zoneFix = ", or a ts written in local wall-clock time and read as UTC: then set STORE_TIMESTAMP_TZ to the zone it is written in"

// dayShift decides whether one gap is the store's hours shifted, from the
// hourly counts of both sides of the day and of the days next to it that
// were read: the store's hour t holds what Elido counted in hour t−s.
func dayShift(d DayResult, details map[Date]DayDetail) (string, bool) {
	var api, local []HourCount
	for _, day := range []Date{d.Date.AddDays(-1), d.Date, d.Date.AddDays(1)} {
		det := details[day]
		if det.APIHours == nil || det.LocalHours == nil {
			if day == d.Date {
				return "", false
			}
			continue
		}
		api, local = append(api, det.APIHours...), append(local, det.LocalHours...)
	}
	shift, ok := hourShift(api, local)
	if !ok || abs64(*d.Delta) < minShifted {
		return "", false
	}
	// An empty or sparse side fits any shift, and a shift fits a day
	// whose only differing hours it moves out of the comparison (an
	// outage in the first hours): the shifted hours must hold enough of
	// the store's clicks, and differ unshifted where they fit shifted.
	misfit, unshifted, covered := shiftFit(api, local, shift)
	if covered < 2*minShifted || misfit*5 > covered || unshifted < minShifted || misfit*4 >= unshifted {
		return "", false
	}
	dir := "later"
	if shift < 0 {
		dir = "earlier"
	}
	n := shortDuration(absDuration(shift))
	return fmt.Sprintf("%s is %+d: the store's hourly counts match Elido's %s %s, so the store looks shifted by %s: its clicks are counted on the wrong side of midnight, not lost (a zone or offset error where clicks are written%s)",
		d.Date, *d.Delta, n, dir, n, zoneFix), true
}

// shiftFit compares the store's hours that have an Elido hour s before
// them: how far they are from those (misfit), how far from Elido's same
// hours (unshifted), and how many of the store's clicks they hold.
func shiftFit(api, local []HourCount, s time.Duration) (misfit, unshifted, covered int64) {
	apiAt := map[int64]int64{}
	for _, h := range api {
		apiAt[h.Start.Unix()] += h.Clicks
	}
	for _, h := range local {
		if a, ok := apiAt[h.Start.Add(-s).Unix()]; ok {
			misfit += abs64(h.Clicks - a)
			unshifted += abs64(h.Clicks - apiAt[h.Start.Unix()])
			covered += h.Clicks
		}
	}
	return misfit, unshifted, covered
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
