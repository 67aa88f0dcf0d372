package main

import (
	"fmt"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// world is the workspace both sides describe: the same clicks, less those
// the store lost on the differing days.
type world struct {
	o     options
	first time.Time // the window's first day, UTC midnight
	lost  map[int]bool
	// shift is which links lost clicks on a differing day: those whose
	// number is shift[day] modulo every.
	shift map[int]int
}

func newWorld(o options) *world {
	last, _ := time.Parse(time.DateOnly, lastDay)
	w := &world{o: o, first: last.AddDate(0, 0, -(o.days - 1)), lost: map[int]bool{}, shift: map[int]int{}}
	if o.differPct > 0 {
		n := min(o.differDays, o.days)
		for i := 1; i <= n; i++ {
			d := i * o.days / (n + 1)
			if o.consecutive {
				d = max(o.days-1-n, 0) + i - 1
			}
			w.lost[d] = true
			if o.eachDay {
				w.shift[d] = (i - 1) % w.every()
			}
		}
	}
	return w
}

func (w *world) differing() int { return len(w.lost) }

// every is how far apart the links that lost clicks are: 1 in every.
func (w *world) every() int {
	if w.o.differPct <= 0 {
		return 0
	}
	return max(int(100/w.o.differPct), 1)
}

func linkID(n int) string { return fmt.Sprintf("lnk_%06d", n) }

// eventLink and eventTime place the i-th click of a day, as the seeding
// SQL does.
func (w *world) eventLink(d, i int) int { return (i*7919 + d) % w.o.links }
func (w *world) eventTime(d, i int) time.Time {
	return w.first.AddDate(0, 0, d).Add(time.Duration(int64(i)*86_400_000_000/int64(w.o.clicks)) * time.Microsecond)
}

// dailyClicks is link n's counter on any day.
func dailyClicks(n int) int64 { return int64(1 + n%5) }

var countries = []string{"PL", "DE", "US", "FR"}

// apiClicks are the clicks of the differing days of the events preset,
// which the drill-down reads per link, country and hour; the other days
// are served as totals, and the daily preset's differing days by a model
// (apiModel).
func (w *world) apiClicks() []elidotest.Click {
	var out []elidotest.Click
	for d := range w.lost {
		if w.o.preset == "events" {
			for i := 0; i < w.o.clicks; i++ {
				out = append(out, elidotest.Click{TS: w.eventTime(d, i), LinkID: linkID(w.eventLink(d, i)), CountryCode: countries[i%4]})
			}
		}
	}
	return out
}

// apiModel is Elido's count of each link on the differing days of the
// daily preset: 30 days of 100k links are 9 M clicks, never held.
func (w *world) apiModel() elidotest.Model {
	m := elidotest.Model{TZ: "UTC", Count: func(_ reconcile.Date, n int) int64 { return dailyClicks(n) }}
	for d := range w.lost {
		m.Days = append(m.Days, reconcile.DateOf(w.first.AddDate(0, 0, d)))
	}
	for n := 0; n < w.o.links; n++ {
		m.Links = append(m.Links, linkID(n))
	}
	return m
}

// apiTotals are Elido's counts of the days that do not differ.
func (w *world) apiTotals() map[string]int64 {
	var perDay int64
	switch w.o.preset {
	case "events":
		perDay = int64(w.o.clicks)
	case "daily":
		for n := 0; n < w.o.links; n++ {
			perDay += dailyClicks(n)
		}
	}
	out := map[string]int64{}
	for d := 0; d < w.o.days; d++ {
		if !w.lost[d] {
			out[w.first.AddDate(0, 0, d).Format(time.DateOnly)] = perDay
		}
	}
	return out
}
