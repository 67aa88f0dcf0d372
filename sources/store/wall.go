package store

import (
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
)

// Wall-clock columns
//
// A ts without an offset or zone (PostgreSQL timestamp, MySQL DATETIME,
// SQLite text without an offset) read in a zone with DST is a wall-clock
// time, and two of a year's wall times are not one instant each: where
// the clocks go back a span of wall time is shown twice (Europe/Warsaw
// 2026-10-25 02:00–02:59, CEST and then CET; Antarctica/Troll's 01:00–02:59
// on the same day; Pacific/Chatham's 02:45–03:44 on 2026-04-05; Lord Howe's
// half hour), and where they jump forward a span is never shown
// (2026-03-29 02:00–02:59). One rule places every wall time, on every
// engine, as PostgreSQL reads a timestamp in its session TimeZone:
//
//   - a wall time the zone shows once is that instant;
//   - a repeated wall time is the later of its two instants (02:30 on the
//     autumn day is 02:30 CET, in the second of the two hours);
//   - a wall time the zone skips is read with the offset in force before
//     the jump (02:30 on the spring day is 02:30 CET, that is 03:30 CEST,
//     in the hour after the jump).
//
// In both cases the wall time names the latest of the instants its
// offsets give it. Hours and days are counted on instants, so a wall-clock
// range is the wall times whose instant falls in the range (wallBound).

// WallInstant is the instant the wall-clock time of w (its year, month,
// day, hour, minute, second and nanosecond, whatever its location) names
// in zone, under the rule above. skipped is true when zone never shows
// that wall time.
func WallInstant(w time.Time, zone *time.Location) (t time.Time, skipped bool) {
	naive := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
	var best, latest time.Time
	found := false
	for _, off := range offsetsAround(naive, zone) {
		c := naive.Add(-time.Duration(off) * time.Second)
		if latest.IsZero() || c.After(latest) {
			latest = c
		}
		if _, o := c.In(zone).Zone(); o == off && (!found || c.After(best)) {
			best, found = c, true
		}
	}
	if !found {
		return latest, true
	}
	return best, false
}

// offsetsAround are the distinct UTC offsets zone has within a day of
// naive: the offsets a wall time near naive may have been written with.
func offsetsAround(naive time.Time, zone *time.Location) []int {
	var out []int
	for _, t := range []time.Time{naive.Add(-26 * time.Hour), naive, naive.Add(26 * time.Hour)} {
		_, off := t.In(zone).Zone()
		seen := false
		for _, o := range out {
			seen = seen || o == off
		}
		if !seen {
			out = append(out, off)
		}
	}
	return out
}

// MySQLWallBound is wallBound as DATETIME(6) text: the bound a MySQL
// wall-clock column is compared with, by the store's reads (mysqlBounds)
// and by a script (repair.sql).
func MySQLWallBound(t time.Time, zone *time.Location) string {
	return wallBound(t, zone).Format(mysqlBoundLayout)
}

// wallBound is the first wall-clock time (as a UTC time.Time holding the
// wall clock) whose instant, by WallInstant, is at or after t: a wall-clock
// column's rows in [wallBound(from), wallBound(to)) are exactly those the
// rule places in [from, to). It is t's own wall time, or earlier when a
// skipped or repeated range of wall times just before it reads as t or
// later.
func wallBound(t time.Time, zone *time.Location) time.Time {
	w := t.In(zone)
	hi := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
	lo := hi.Add(-4 * time.Hour) // longer than any jump of a wall clock
	if at, _ := WallInstant(lo, zone); !at.Before(t) {
		return lo // cannot happen in the tz database; keeps the search bounded
	}
	// The rule is monotonic in the wall time: search the first wall time
	// (to the microsecond, the finest a column stores) that reads as t or
	// later.
	for hi.Sub(lo) > time.Microsecond {
		mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Microsecond)
		if mid.Equal(lo) {
			mid = lo.Add(time.Microsecond)
		}
		if at, _ := WallInstant(mid, zone); at.Before(t) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// WallKey is the wall-clock time of instant t in zone at the millisecond,
// as a wall-clock column stores it: the text two clicks share when they
// fall on the same wall time (the two 02:30:00.000 of an autumn day).
func WallKey(t time.Time, zone *time.Location) string {
	return t.In(zone).Format(wallLayout)
}

// wallLayout is a wall-clock time as clickrecon writes and compares it.
const wallLayout = "2006-01-02 15:04:05.000"

// Repeat is a span of wall time a zone shows twice, where its clocks go
// back by Back at the instant At: the wall times shown from At-Back to At
// are shown again from At to At+Back. The span is whatever the zone
// repeats: an hour in most zones, two in Antarctica/Troll, half an hour in
// Australia/Lord_Howe, an hour from :45 in Pacific/Chatham. A wall-clock
// column cannot tell the clicks of [From, To) apart by their time, and
// reads every one of them in the second pass (WallInstant).
type Repeat struct {
	At   time.Time
	Back time.Duration
}

// From is the first instant whose wall time is shown again.
func (r Repeat) From() time.Time { return r.At.Add(-r.Back) }

// To is the first instant after the second showing.
func (r Repeat) To() time.Time { return r.At.Add(r.Back) }

// Inside reports whether t is strictly inside [From, To): instants on
// both sides of t show the same wall times.
func (r Repeat) Inside(t time.Time) bool { return r.From().Before(t) && t.Before(r.To()) }

// repeatStep is how far apart Repeats looks at a zone's offset: less than
// the time between any two transitions of the tz database.
const repeatStep = 30 * time.Minute

// maxBack is the longest a zone's clocks are taken to go back: a repeat
// whose span reaches [from, to) from further than this is not seen.
const maxBack = 26 * time.Hour

// Repeats returns the repeats of zone whose span [From, To) overlaps
// [from, to), in order: every instant its offset falls, found by looking
// at the offset every repeatStep and bisecting a change to the second
// (the tz database's transitions fall on whole seconds).
func Repeats(from, to time.Time, zone *time.Location) []Repeat {
	if zone == nil {
		return nil
	}
	var out []Repeat
	lo := from.Add(-maxBack)
	_, prev := lo.In(zone).Zone()
	for t := lo; t.Before(to.Add(maxBack)); t = t.Add(repeatStep) {
		next := t.Add(repeatStep)
		_, off := next.In(zone).Zone()
		if off == prev {
			continue
		}
		if off < prev {
			a, b := t, next // the old offset at a, the new at b
			for b.Sub(a) > time.Second {
				mid := a.Add(b.Sub(a) / 2).Truncate(time.Second)
				if !mid.After(a) {
					mid = a.Add(time.Second)
				}
				if _, o := mid.In(zone).Zone(); o == prev {
					a = mid
				} else {
					b = mid
				}
			}
			if r := (Repeat{At: b, Back: time.Duration(prev-off) * time.Second}); r.To().After(from) && r.From().Before(to) {
				out = append(out, r)
			}
		}
		prev = off
	}
	return out
}

// SharesWall reports whether instants on either side of b show the same
// wall-clock times in zone: b is strictly inside a span the zone repeats
// (Repeats), so the hours on either side of b, whose clicks a wall-clock
// column cannot tell apart, are compared as one.
func SharesWall(b time.Time, zone *time.Location) bool {
	for _, r := range Repeats(b, b.Add(time.Nanosecond), zone) {
		if r.Inside(b) {
			return true
		}
	}
	return false
}

// MergeShared returns hours with each run of hours that share wall times
// in zone (SharesWall) made one, at the first one's start, counting them
// all: how a wall-clock column's hours are compared with Elido's, which
// are merged alike. Every hour that holds a wall time of a repeated span,
// in its first showing or its second, is in the one row, whatever the
// span's length and however it falls on the hours: the two hours Europe's
// autumn day repeats, the four Antarctica/Troll's two-hour fall back
// touches, the three of Pacific/Chatham's hour at :45. hours is returned
// as it is when zone is nil.
func MergeShared(hours []reconcile.HourCount, zone *time.Location) []reconcile.HourCount {
	if zone == nil || len(hours) == 0 {
		return hours
	}
	reps := Repeats(hours[0].Start, hours[len(hours)-1].Start.Add(time.Hour), zone)
	out := make([]reconcile.HourCount, 0, len(hours))
	for i, h := range hours {
		if n := len(out); n > 0 && i > 0 && h.Start.Sub(hours[i-1].Start) <= time.Hour && inside(reps, h.Start) {
			out[n-1].Clicks += h.Clicks
			continue
		}
		out = append(out, h)
	}
	return out
}

// inside reports whether t is inside one of reps.
func inside(reps []Repeat, t time.Time) bool {
	for _, r := range reps {
		if r.Inside(t) {
			return true
		}
	}
	return false
}
