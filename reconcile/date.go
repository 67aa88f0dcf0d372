// Package reconcile is clickrecon's domain: calendar days in a time zone,
// reconciliation windows, tolerances and the comparison of Elido's daily
// counts with the local store's. It does no I/O and imports no other
// clickrecon package, so it is tested with tables alone.
package reconcile

import (
	"fmt"
	"regexp"
	"time"
)

// Date is a calendar day with no zone attached. It becomes a span of time
// only together with a *time.Location (see Date.Bounds).
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// dateLayout is how dates are written on every wire clickrecon speaks:
// flags, the Elido API, the store's :day parameter and the report.
const dateLayout = "2006-01-02"

// dateForm is the form of a date, whether or not its day exists.
var dateForm = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// ParseDate reads a YYYY-MM-DD date and rejects anything else, including
// dates that do not exist such as 2026-02-30.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(dateLayout, s)
	switch {
	case err == nil:
	case len(s) == len(dateLayout) && dateForm.MatchString(s):
		return Date{}, fmt.Errorf("%q is not a date: no such day in the calendar", s)
	default:
		return Date{}, fmt.Errorf("%q is not a date in YYYY-MM-DD form", s)
	}
	return DateOf(t), nil
}

// DateOf returns the calendar day of t in t's own location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{Year: y, Month: m, Day: d}
}

// String formats d as YYYY-MM-DD.
func (d Date) String() string {
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// MarshalText writes d as YYYY-MM-DD, so a Date is a plain string in JSON.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a YYYY-MM-DD date.
func (d *Date) UnmarshalText(b []byte) error {
	p, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// AddDays returns the date n calendar days after d (before it when n < 0).
func (d Date) AddDays(n int) Date {
	return DateOf(time.Date(d.Year, d.Month, d.Day+n, 12, 0, 0, 0, time.UTC))
}

// Before reports whether d comes before e.
func (d Date) Before(e Date) bool { return d.Compare(e) < 0 }

// After reports whether d comes after e.
func (d Date) After(e Date) bool { return d.Compare(e) > 0 }

// Compare returns -1, 0 or +1 as d is before, equal to or after e.
func (d Date) Compare(e Date) int {
	switch {
	case d.Year != e.Year:
		return cmpInt(d.Year, e.Year)
	case d.Month != e.Month:
		return cmpInt(int(d.Month), int(e.Month))
	default:
		return cmpInt(d.Day, e.Day)
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Start returns the first instant of d in loc. On a day whose midnight does
// not exist in loc (a DST jump at 00:00, as in America/Santiago or
// Asia/Beirut) it is the transition instant, and where midnight occurs twice
// (America/Havana in November) it is the first of the two, so that
// consecutive days always tile the time line with no gap and no overlap.
func (d Date) Start(loc *time.Location) time.Time {
	t := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
	if DateOf(t).Before(d) {
		// Midnight fell in a DST gap and time.Date normalised it backwards
		// into the previous day: the day starts at the transition.
		_, end := t.ZoneBounds()
		return end
	}
	if zoneStart, _ := t.ZoneBounds(); !zoneStart.IsZero() {
		// Midnight may occur twice (clocks fall back from 01:00 to 00:00):
		// the day starts at the first one, in the zone period before.
		last := zoneStart.Add(-time.Nanosecond)
		if DateOf(last) == d {
			_, offset := last.Zone()
			first := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.FixedZone("", offset)).In(loc)
			if first.Before(t) && DateOf(first) == d {
				return first
			}
		}
	}
	return t
}

// Bounds returns the half-open span [start, end) that is the calendar day d
// in loc. end is the next day's first instant, so a DST day is 23 or 25
// hours long.
func (d Date) Bounds(loc *time.Location) (start, end time.Time) {
	return d.Start(loc), d.AddDays(1).Start(loc)
}

// Hours returns the length of d in loc in hours (23, 24 or 25 on DST
// days; fractional in zones with half-hour shifts such as Australia/Lord_Howe).
func (d Date) Hours(loc *time.Location) float64 {
	start, end := d.Bounds(loc)
	return end.Sub(start).Hours()
}
