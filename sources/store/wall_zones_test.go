package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/tzdb"
	"github.com/clickrecon/clickrecon/reconcile"
)

// zoneDay is a calendar day of a zone on which its offset changes.
type zoneDay struct {
	zone *time.Location
	day  reconcile.Date
}

// transitionDays are the days of every zone of the tz database on which
// a transition of 2025–2027 shows a wall time twice or never: the day of
// the transition and those of the wall times around it.
func transitionDays(t testing.TB) []zoneDay {
	t.Helper()
	from, to := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []zoneDay
	for _, zone := range tzdb.Zones(t) {
		seen := map[reconcile.Date]bool{}
		for _, tr := range tzdb.Transitions(zone, from, to) {
			jump := time.Duration(tr.Before-tr.After) * time.Second
			for _, at := range []time.Time{tr.At.Add(-jump.Abs() - time.Minute), tr.At, tr.At.Add(jump.Abs())} {
				if d := reconcile.DateOf(at.In(zone)); !seen[d] {
					seen[d] = true
					out = append(out, zoneDay{zone, d})
				}
			}
		}
	}
	return out
}

// minuteModel is a day read minute by minute, the reference the wall-clock
// code is checked against in every zone: which hours of the day (Elido's,
// one an hour from the day's first instant) show a same wall-clock minute,
// and the latest instant that shows each wall minute.
type minuteModel struct {
	hours  []time.Time // the starts of the day's hours
	unitOf []int       // each hour's unit: the first hour of the hours that share a wall minute with it, directly or not
	latest map[string]time.Time
}

const minuteKey = "2006-01-02 15:04"

func newMinuteModel(d reconcile.Date, zone *time.Location) minuteModel {
	start, end := d.Bounds(zone)
	m := minuteModel{latest: map[string]time.Time{}}
	for h := start; h.Before(end); h = h.Add(time.Hour) {
		m.hours = append(m.hours, h)
	}
	parent := make([]int, len(m.hours))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			i = parent[i]
		}
		return i
	}
	first := map[string]int{} // a wall minute's first hour
	for at := start.Add(-6 * time.Hour); at.Before(end.Add(6 * time.Hour)); at = at.Add(time.Minute) {
		k := at.In(zone).Format(minuteKey)
		m.latest[k] = at // instants ascend: the last one seen is the latest
		if at.Before(start) || !at.Before(end) {
			continue
		}
		i := int(at.Sub(start) / time.Hour)
		if j, ok := first[k]; ok {
			a, b := find(i), find(j)
			parent[max(a, b)] = min(a, b)
		} else {
			first[k] = i
		}
	}
	// A unit is a run of hours: one that shares with a later hour spans
	// the hours between.
	m.unitOf = make([]int, len(m.hours))
	last := make([]int, len(m.hours))
	for i := range m.hours {
		last[find(i)] = i
	}
	for i := 0; i < len(m.hours); {
		j := last[find(i)]
		for k := i; k <= j; k++ {
			j = max(j, last[find(k)])
		}
		for k := i; k <= j; k++ {
			m.unitOf[k] = i
		}
		i = j + 1
	}
	return m
}

// instant is the wall-clock rule by the model: the latest instant showing
// the wall minute w, or, for a minute no instant shows, w read with the
// offset in force just before the jump over it (the latest offset of an
// instant before w's own reading in every offset the day has).
func (m minuteModel) instant(w time.Time, zone *time.Location) (time.Time, bool) {
	if at, ok := m.latest[w.Format(minuteKey)]; ok {
		return at.Add(time.Duration(w.Second())*time.Second + time.Duration(w.Nanosecond())), false
	}
	naive := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
	for at := naive.Add(-16 * time.Hour); at.Before(naive.Add(16 * time.Hour)); at = at.Add(time.Minute) {
		_, o1 := at.In(zone).Zone()
		_, o2 := at.Add(time.Minute).In(zone).Zone()
		if o2 > o1 && !at.Add(time.Minute+time.Duration(o1)*time.Second).After(naive) && at.Add(time.Minute+time.Duration(o2)*time.Second).After(naive) {
			return naive.Add(-time.Duration(o1) * time.Second), true
		}
	}
	panic(fmt.Sprintf("no jump over %s in %s", w.Format(minuteKey), zone))
}

// In every zone of the tz database, on every day of 2025–2027 a
// transition shows a wall time twice or never, the hours a wall-clock
// column cannot tell apart are merged as the model merges them (whatever
// span the zone repeats: Troll's two hours, Lord Howe's half hour,
// Chatham's hour at :45), every other hour is left alone, wall times are
// read by the rule, and a wall-clock bound is the model's first wall
// minute read at or after it.
func TestWallClockInEveryZone(t *testing.T) {
	days := transitionDays(t)
	if len(days) < 1000 {
		t.Fatalf("%d transition days in the tz database: the zones were not all read", len(days))
	}
	zones := map[string]bool{}
	for _, zd := range days {
		zones[zd.zone.String()] = true
		m := newMinuteModel(zd.day, zd.zone)
		name := zd.zone.String() + " " + zd.day.String()

		hours := make([]reconcile.HourCount, len(m.hours))
		for i, h := range m.hours {
			hours[i] = reconcile.HourCount{Start: h, Clicks: 1 << i}
		}
		var want []reconcile.HourCount
		for i, h := range hours {
			if n := len(want); n > 0 && m.unitOf[i] != i {
				want[n-1].Clicks += h.Clicks
				continue
			}
			want = append(want, h)
		}
		got := MergeShared(hours, zd.zone)
		if fmt.Sprint(unitsOf(got, zd.zone)) != fmt.Sprint(unitsOf(want, zd.zone)) {
			t.Errorf("%s: MergeShared %v, the model %v", name, unitsOf(got, zd.zone), unitsOf(want, zd.zone))
		}
		for i, h := range m.hours {
			if got := SharesWall(h, zd.zone); i > 0 && got != (m.unitOf[i] != i) {
				t.Errorf("%s: SharesWall(%s) = %v", name, h.In(zd.zone).Format("15:04 MST"), got)
			}
		}

		start, end := zd.day.Bounds(zd.zone)
		for at := start.Add(-time.Hour); at.Before(end.Add(time.Hour)); at = at.Add(5 * time.Minute) {
			w := at.In(zd.zone).Add(7*time.Second + 250*time.Millisecond)
			for _, wall := range []time.Time{w, w.Add(time.Duration(at.Unix()%3600) * time.Second)} {
				want, wantSkipped := m.instant(wall, zd.zone)
				if got, skipped := WallInstant(wall, zd.zone); !got.Equal(want) || skipped != wantSkipped {
					t.Errorf("%s: WallInstant(%s) = %s, %v; the model %s, %v", name, wall.Format(wallLayout), got.UTC(), skipped, want.UTC(), wantSkipped)
				}
			}
		}
		for _, h := range append(m.hours, end) {
			got := wallBound(h, zd.zone)
			if at, _ := m.instant(got, zd.zone); at.Before(h) {
				t.Errorf("%s: wallBound(%s) = %s, which reads as %s, before it", name, h.UTC(), got.Format(wallLayout), at.UTC())
			}
			if at, _ := m.instant(got.Add(-time.Millisecond), zd.zone); !at.Before(h) {
				t.Errorf("%s: wallBound(%s) = %s, but the millisecond before reads as %s, not before it", name, h.UTC(), got.Format(wallLayout), at.UTC())
			}
		}
	}
	for _, z := range []string{"Antarctica/Troll", "Pacific/Chatham", "Australia/Lord_Howe", "Europe/Warsaw", "America/New_York"} {
		if !zones[z] {
			t.Errorf("%s has no transition day: the tz database was not read whole", z)
		}
	}
	t.Logf("%d zones, %d transition days", len(zones), len(days))
}

// unitsOf names merged hours as "15:04 MST×clicks".
func unitsOf(hours []reconcile.HourCount, zone *time.Location) []string {
	out := make([]string, len(hours))
	for i, h := range hours {
		out[i] = fmt.Sprintf("%s×%d", h.Start.In(zone).Format("15:04 MST"), h.Clicks)
	}
	return out
}
