package sim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// click is one click of the world; its key names it in the store too.
type click struct {
	ts            time.Time
	link, country string
}

func (c click) key() string {
	return c.ts.UTC().Format(time.RFC3339) + "|" + c.link + "|" + c.country
}

// eclick is a click as Elido knows it: counted from seen on, and, when
// Elido revised it away (a bot filtered out), no more from gone on.
type eclick struct {
	click
	seen, gone time.Time
}

// late is a write of the team's receiver that comes later than its click:
// a receiver that was down and then backfilled.
type late struct {
	at     int // the night it arrives
	clicks []click
}

// world is the seeded model: Elido's clicks, what the receiver wrote to
// the store, and what it will write later.
type world struct {
	rng       *rand.Rand
	loc       *time.Location
	links     []string
	countries []string
	elido     []eclick
	recv      map[string]int // key: how many times the receiver wrote it
	pending   []late
	used      map[int64]bool // seconds that hold a click: keys are unique
	events    map[string]int // the world's events by kind, for the figures
	// spell draws the receiver's bad weeks, on a stream of its own so
	// that the other events of a seed stay as they were found; spellLeft
	// is the nights left of the one under way.
	spell     *rand.Rand
	spellLeft int
}

func newWorld(rng *rand.Rand, loc *time.Location) *world {
	return &world{rng: rng, loc: loc,
		links:     []string{"lnk_spring", "lnk_news", "lnk_app"},
		countries: []string{"PL", "DE", "US", ""},
		recv:      map[string]int{}, used: map[int64]bool{}, events: map[string]int{}}
}

// dayStart is the first instant of d in the world's zone.
func (w *world) dayStart(d reconcile.Date) time.Time {
	return time.Date(d.Year, time.Month(d.Month), d.Day, 0, 0, 0, 0, w.loc)
}

// evolve is what happens in the world up to night n at now: day y (the
// day that just ended) has its traffic, and the events the seed draws.
// It returns the clicks the receiver writes now.
func (w *world) evolve(n int, now time.Time, y reconcile.Date) []click {
	from, to := w.dayStart(y), w.dayStart(y.AddDays(1))
	secs := int64(to.Sub(from) / time.Second)
	var day []click
	for _, l := range w.links {
		for range 10 + w.rng.IntN(25) {
			var s int64
			for {
				s = from.Unix() + w.rng.Int64N(secs)
				if !w.used[s] {
					break
				}
			}
			w.used[s] = true
			day = append(day, click{ts: time.Unix(s, 0).UTC(), link: l, country: w.countries[w.rng.IntN(len(w.countries))]})
		}
	}
	sort.Slice(day, func(i, j int) bool { return day[i].ts.Before(day[j].ts) })
	lateFrom := to.Add(-6 * time.Hour)
	lateData := w.rng.Float64() < 0.08
	if lateData {
		w.events["late data (Elido counts a settled day later)"]++
	}
	for _, c := range day {
		e := eclick{click: c, seen: c.ts}
		if lateData && c.ts.After(lateFrom) && w.rng.IntN(4) == 0 {
			e.seen = now.Add(time.Duration(1+w.rng.IntN(2)) * 24 * time.Hour)
		}
		w.elido = append(w.elido, e)
	}
	// The receiver: down for a span (an outage), sometimes backfilled
	// later; sometimes it stores a few clicks twice.
	write := day
	if w.rng.Float64() < 0.2 {
		start := from.Add(time.Duration(w.rng.Int64N(int64(to.Sub(from)))))
		end := start.Add(time.Duration(10+w.rng.IntN(110)) * time.Minute)
		var kept, lost []click
		for _, c := range day {
			if !c.ts.Before(start) && c.ts.Before(end) {
				lost = append(lost, c)
			} else {
				kept = append(kept, c)
			}
		}
		write = kept
		w.events["outage"]++
		if len(lost) > 0 && w.rng.IntN(2) == 0 {
			w.pending = append(w.pending, late{at: n + 1 + w.rng.IntN(4), clicks: lost})
			w.events["late receiver (an outage backfilled later)"]++
		}
	}
	write = w.crash(from, to, write)
	if w.rng.Float64() < 0.1 && len(write) > 0 {
		for range 1 + w.rng.IntN(4) {
			write = append(write, write[w.rng.IntN(len(write))])
		}
		w.events["duplicates (the receiver stores a click twice)"]++
	}
	// Elido revises a settled day of the window: bot clicks filtered out.
	if w.rng.Float64() < 0.05 {
		d := y.AddDays(-1 - w.rng.IntN(4))
		lo, hi := w.dayStart(d), w.dayStart(d.AddDays(1))
		k := 1 + w.rng.IntN(3)
		for i := range w.elido {
			e := &w.elido[i]
			if k > 0 && e.gone.IsZero() && !e.ts.Before(lo) && e.ts.Before(hi) && w.rng.IntN(5) == 0 {
				e.gone = now
				k--
			}
		}
		w.events["Elido revises a day"]++
	}
	var rest []late
	for _, l := range w.pending {
		if l.at == n {
			write = append(write, l.clicks...)
		} else {
			rest = append(rest, l)
		}
	}
	w.pending = rest
	for _, c := range write {
		w.recv[c.key()]++
	}
	return write
}

// visible is Elido's clicks at now from since on: counted and not
// revised away.
func (w *world) visible(now, since time.Time) []elidotest.Click {
	var out []elidotest.Click
	for _, e := range w.elido {
		if e.ts.Before(since) || e.seen.After(now) || (!e.gone.IsZero() && !e.gone.After(now)) {
			continue
		}
		out = append(out, elidotest.Click{TS: e.ts, LinkID: e.link, CountryCode: e.country})
	}
	return out
}

// elidoHas says whether Elido ever counted the click of key.
func (w *world) elidoKeys(from, to time.Time) map[string]bool {
	out := map[string]bool{}
	for _, e := range w.elido {
		if !e.ts.Before(from) && e.ts.Before(to) {
			out[e.key()] = true
		}
	}
	return out
}

// trim forgets what is older than a month before now: no run reads it.
func (w *world) trim(before time.Time) {
	var keep []eclick
	for _, e := range w.elido {
		if !e.ts.Before(before) {
			keep = append(keep, e)
		}
	}
	w.elido = keep
	for s := range w.used {
		if s < before.Unix() {
			delete(w.used, s)
		}
	}
}

func (e eclick) String() string {
	return fmt.Sprintf("%s %s %s", e.ts.Format(time.RFC3339), e.link, e.country)
}

// crash is a bad week of the receiver: now and then a spell of 6 to 10
// nights starts in which it crashes on most days for 3 to 6 hours, the
// clicks of those hours lost for good: outages that recur, which the
// worse-trend word must tell once and say when they passed. It returns
// what the receiver writes of write on the day from..to.
func (w *world) crash(from, to time.Time, write []click) []click {
	if w.spell == nil {
		return write
	}
	if w.spellLeft == 0 && w.spell.Float64() < 0.03 {
		w.spellLeft = 6 + w.spell.IntN(5)
		w.events["a bad week (the receiver crashes most days)"]++
	}
	if w.spellLeft == 0 {
		return write
	}
	w.spellLeft--
	if w.spell.IntN(3) == 0 {
		return write
	}
	start := from.Add(time.Duration(w.spell.Int64N(int64(to.Sub(from) / 2))))
	end := start.Add(time.Duration(3+w.spell.IntN(4)) * time.Hour)
	kept := write[:0:0]
	for _, c := range write {
		if c.ts.Before(start) || !c.ts.Before(end) {
			kept = append(kept, c)
		}
	}
	w.events["crash (a bad week's outage)"]++
	return kept
}
