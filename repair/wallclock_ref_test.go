package repair_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/repair"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// The wall-clock differential test: random clicks on and around the
// transitions of a zone, written as wall-clock times, some lost, some
// written with the offset before a spring jump, some twins sharing a wall
// time across the span an autumn day repeats, some foreign, are read
// through the store's code and planned and applied by the repair's, and
// compared with a reference written here from the documented rule
// (docs/stores.md, "Wall-clock times and DST") without the store's code:
// every hour's count equals the reference's, every hour is planned as the
// reference plans it or refused where the reference refuses it, no click
// is ever written a second time, and a day the reference can repair whole
// matches once repaired. The reference finds the hours a column cannot
// tell apart minute by minute (refUnits), whatever span the zone repeats.
//
// TestWallClockAgainstTheReference runs it on a PostgreSQL timestamp and
// a MariaDB DATETIME, on the odd zones and a sample of the usual ones;
// TestWallClockInEveryZoneAgainstTheReference runs it, without a
// database, on every day of 2025–2027 on which a zone of the tz database
// changes its offset. A failing seed is printed; add it to wallSeeds to
// keep it.
var wallSeeds = []uint64{1, 2, 3}

var wallDays = []struct{ zone, day string }{
	{"Europe/Warsaw", "2026-03-29"},
	{"Europe/Warsaw", "2026-10-25"},
	{"America/New_York", "2026-03-08"},
	{"America/New_York", "2026-11-01"},
	{"Antarctica/Troll", "2026-10-25"}, // two hours repeated
	{"Pacific/Chatham", "2026-04-05"},  // the hour from 02:45 repeated
	{"Australia/Lord_Howe", "2026-04-05"},
	{"Australia/Lord_Howe", "2026-10-04"},
	{"Asia/Beirut", "2026-10-24"},     // 23:00–23:59 repeated, to the day's end
	{"Atlantic/Azores", "2026-10-25"}, // 00:00–00:59 repeated, from the day's start
	{"America/Santiago", "2026-04-04"},
}

func TestWallClockAgainstTheReference(t *testing.T) {
	for _, e := range wallEngines {
		for _, wd := range wallDays {
			for _, seed := range wallSeeds {
				t.Run(fmt.Sprintf("%s/%s/%s/seed_%d", e.name, wd.zone, wd.day, seed), func(t *testing.T) {
					zone := mustZone(t, wd.zone)
					d := mustDate(wd.day)
					elidoClicks, stored := randomWallDay(rand.New(rand.NewPCG(seed, 0)), d, zone)
					w := e.world(t, zone, elidoClicks, stored)
					checkAgainstReference(t, refEnv{api: w.api, st: w.st, w: w.w, zone: zone, o: w.options(t, d), rows: w.rows}, d, elidoClicks, stored)
				})
			}
		}
	}
}

// randomWallDay returns a day of Elido's clicks around the day's
// transition and the rows a receiver left of them: most written at their
// wall time, some lost, some of the span after a spring jump written with
// the old offset (at a wall time the day skips), some twins sharing a wall
// time across the span an autumn day repeats, and a few rows Elido never
// had.
func randomWallDay(r *rand.Rand, d reconcile.Date, zone *time.Location) ([]elidotest.Click, []wallRow) {
	start, end := d.Bounds(zone)
	jump := start // the day's transition, or its end when it has none
	for _, off0 := offsetAt(start, zone); jump.Before(end); jump = jump.Add(time.Minute) {
		if _, off := offsetAt(jump, zone); off != off0 {
			break
		}
	}
	_, before := offsetAt(jump.Add(-time.Minute), zone)
	_, after := offsetAt(jump, zone)
	shift := time.Duration(after-before) * time.Second // the jump forward, or back when negative
	links := []string{"lnk_a", "lnk_b", "lnk_c"}
	countries := []string{"PL", "US", ""}
	click := func(t time.Time) elidotest.Click {
		return elidotest.Click{TS: t.Truncate(time.Millisecond), LinkID: links[r.IntN(len(links))], CountryCode: countries[r.IntN(len(countries))]}
	}
	var clicks []elidotest.Click
	for range 60 + r.IntN(60) { // around the switch: three hours either side
		clicks = append(clicks, click(jump.Add(time.Duration(r.Int64N(int64(6*time.Hour)))-3*time.Hour)))
	}
	for range 10 + r.IntN(10) { // anywhere in the day
		clicks = append(clicks, click(start.Add(time.Duration(r.Int64N(int64(end.Sub(start)))))))
	}
	for i := range 8 { // twins: the same wall time shown twice on an autumn day
		c := clicks[i]
		if shift < 0 {
			c.TS = jump.Add(shift + time.Duration(r.Int64N(int64(-shift)))).Truncate(time.Millisecond)
			clicks = append(clicks, c)
			c.TS = c.TS.Add(-shift)
		} else {
			c.TS = c.TS.Add(time.Hour)
		}
		clicks = append(clicks, c)
	}
	var inDay []elidotest.Click
	for _, c := range clicks {
		if !c.TS.Before(start) && c.TS.Before(end) {
			inDay = append(inDay, c)
		}
	}
	var stored []wallRow
	for _, c := range inDay {
		switch p := r.IntN(100); {
		case p < 15: // lost
		case p < 30 && shift > 0 && !c.TS.Before(jump) && c.TS.Before(jump.Add(shift)):
			// written with the offset in force before the jump: a wall
			// time the day skips
			old := c.TS.In(time.FixedZone("before", before))
			stored = append(stored, wallRow{old.Format("2006-01-02 15:04:05.000"), c.LinkID, c.CountryCode})
		default:
			stored = append(stored, wallRow{store.WallKey(c.TS, zone), c.LinkID, c.CountryCode})
		}
	}
	for range r.IntN(3) { // foreign rows
		c := click(jump.Add(time.Duration(r.Int64N(int64(4*time.Hour))) - 2*time.Hour))
		if !c.TS.Before(start) && c.TS.Before(end) {
			stored = append(stored, wallRow{store.WallKey(c.TS, zone), "lnk_foreign", c.CountryCode})
		}
	}
	return inDay, stored
}

func offsetAt(t time.Time, zone *time.Location) (string, int) { return t.In(zone).Zone() }

// refInstant is the documented rule, written again without the store's
// code: the instants whose wall clock in zone shows w; the latest of them;
// for a wall time no instant shows, w read with the offset in force just
// before the jump over it.
func refInstant(w time.Time, zone *time.Location) (at time.Time, skipped bool) {
	naive := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
	var shows []time.Time
	for off := -14 * 60; off <= 14*60; off += 15 { // every offset a zone may have, to the quarter hour
		t := naive.Add(-time.Duration(off) * time.Minute)
		if _, o := t.In(zone).Zone(); o == off*60 {
			shows = append(shows, t)
		}
	}
	if len(shows) > 0 {
		return slices.MaxFunc(shows, func(a, b time.Time) int { return a.Compare(b) }), false
	}
	for t := naive.Add(-16 * time.Hour); t.Before(naive.Add(16 * time.Hour)); t = t.Add(time.Minute) {
		_, o1 := t.In(zone).Zone()
		_, o2 := t.Add(time.Minute).In(zone).Zone()
		if o1 != o2 && t.Add(time.Duration(o1)*time.Second).Before(naive) { // the jump over w
			return naive.Add(-time.Duration(o1) * time.Second), true
		}
	}
	panic("no jump near a skipped wall time")
}

// wallRefHour is a row of the reference's hourly comparison: Elido's hours
// of the day, those whose instants show a same wall time made one.
type wallRefHour struct {
	from, to   time.Time
	api, local int64
}

// refUnits are the day's hours (one an hour from its first instant, the
// last cut at its end), each run of hours that show a same wall-clock
// minute, directly or through the hours between, made one: read minute by
// minute, without the store's code.
func refUnits(d reconcile.Date, zone *time.Location) []wallRefHour {
	start, end := d.Bounds(zone)
	var starts []time.Time
	for h := start; h.Before(end); h = h.Add(time.Hour) {
		starts = append(starts, h)
	}
	reach := make([]int, len(starts)) // the last hour each hour shares a wall minute with
	first := map[string]int{}
	for at := start; at.Before(end); at = at.Add(time.Minute) {
		i := int(at.Sub(start) / time.Hour)
		reach[i] = max(reach[i], i)
		k := at.In(zone).Format("2006-01-02 15:04")
		if j, ok := first[k]; ok {
			reach[j] = max(reach[j], i)
		} else {
			first[k] = i
		}
	}
	var out []wallRefHour
	for i := 0; i < len(starts); {
		j := reach[i]
		for k := i; k <= j; k++ {
			j = max(j, reach[k])
		}
		to := start.Add(time.Duration(j+1) * time.Hour)
		if to.After(end) {
			to = end
		}
		out = append(out, wallRefHour{from: starts[i], to: to})
		i = j + 1
	}
	return out
}

// refInstants is refInstant of each stored row, once.
func refInstants(stored []wallRow, zone *time.Location) (at []time.Time, skipped []bool) {
	at, skipped = make([]time.Time, len(stored)), make([]bool, len(stored))
	memo := map[string]int{}
	for i, r := range stored {
		if j, ok := memo[r.wall]; ok {
			at[i], skipped[i] = at[j], skipped[j]
			continue
		}
		at[i], skipped[i] = refInstant(parseWall(r.wall), zone)
		memo[r.wall] = i
	}
	return at, skipped
}

func refHours(d reconcile.Date, zone *time.Location, elidoClicks []elidotest.Click, stored []wallRow) []wallRefHour {
	hours := refUnits(d, zone)
	find := func(t time.Time) *wallRefHour {
		for i := range hours {
			if !t.Before(hours[i].from) && t.Before(hours[i].to) {
				return &hours[i]
			}
		}
		return nil
	}
	for _, c := range elidoClicks {
		find(c.TS).api++
	}
	at, _ := refInstants(stored, zone)
	for i := range stored {
		if h := find(at[i]); h != nil {
			h.local++
		}
	}
	return hours
}

func parseWall(s string) time.Time {
	w, err := time.Parse("2006-01-02 15:04:05.000", s)
	if err != nil {
		panic(err)
	}
	return w
}

// refEnv is what the reference is checked through: a store holding
// wall-clock times in zone (a real engine, or a model of one), Elido, and
// the repair's options.
type refEnv struct {
	api  repair.Elido
	st   repair.Store
	w    repair.Writer
	zone *time.Location
	o    repair.Options
	rows func(*testing.T) []string // every row as "wall|link|country"
}

func checkAgainstReference(t *testing.T, w refEnv, d reconcile.Date, elidoClicks []elidotest.Click, stored []wallRow) {
	t.Helper()
	zone := w.zone
	ref := refHours(d, zone, elidoClicks, stored)
	storedAt, storedSkipped := refInstants(stored, zone)

	// Hourly counts, as the drill-down compares them.
	api, err := w.api.HourlyTimeseries(t.Context(), d, zone, "")
	if err != nil {
		t.Fatal(err)
	}
	local, err := w.st.HourlyCounts(t.Context(), w.o.Query, d, zone)
	if err != nil {
		t.Fatal(err)
	}
	api, local = store.MergeShared(api, zone), store.MergeShared(local, zone)
	if len(api) != len(ref) || len(local) != len(ref) {
		t.Fatalf("%d hours for Elido, %d for the store, %d for the reference", len(api), len(local), len(ref))
	}
	for i, h := range ref {
		if !api[i].Start.Equal(h.from) || api[i].Clicks != h.api || local[i].Clicks != h.local {
			t.Errorf("hour %s: Elido %d, store %d; the reference %d, %d", h.from.In(zone).Format("15:04 MST"), api[i].Clicks, local[i].Clicks, h.api, h.local)
		}
		if i+1 < len(ref) && !local[i+1].Start.Equal(ref[i+1].from) {
			t.Errorf("the store's row after %s starts at %s, the reference's at %s", h.from.In(zone).Format("15:04 MST"), local[i+1].Start.In(zone).Format("15:04 MST"), ref[i+1].from.In(zone).Format("15:04 MST"))
		}
	}

	// The plan: per hour that differs, what the reference puts back, or a
	// refusal where the reference refuses.
	type key struct{ wall, link, country string }
	o := w.o
	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 {
		t.Fatalf("%d plans", len(plans))
	}
	planned := map[time.Time]repair.HourPlan{}
	for _, h := range plans[0].Hours {
		planned[h.From] = h
	}
	var apiTotal, localTotal int64
	for _, h := range ref {
		apiTotal, localTotal = apiTotal+h.api, localTotal+h.local
	}
	if localTotal >= apiTotal {
		if plans[0].Skipped == "" {
			t.Errorf("the store has %d of Elido's %d clicks, yet the day is planned", localTotal, apiTotal)
		}
		return
	}
	if len(planned) != len(plans[0].Hours) {
		t.Errorf("%d hours planned, %d of them with another start", len(plans[0].Hours), len(plans[0].Hours)-len(planned))
	}
	anyRefused, anySurplus, anyAdd := false, false, false
	for _, h := range ref {
		p, ok := planned[h.from.UTC()]
		// An hour whose counts match is planned only when its clicks
		// differ (a lost click beside a row Elido does not count), and
		// then as one that differs.
		if h.api == h.local && !ok {
			continue
		}
		if !ok {
			t.Errorf("hour %s differs (%d, %d), yet is not planned", h.from.In(zone).Format("15:04 MST"), h.api, h.local)
			continue
		}
		if !p.To.Equal(h.to) {
			t.Errorf("hour %s planned up to %s, the reference's up to %s", h.from.In(zone).Format("15:04 MST"), p.To.In(zone).Format("15:04 MST"), h.to.In(zone).Format("15:04 MST"))
		}
		counts := map[key]int{}
		skipped := false
		for _, c := range elidoClicks {
			if !c.TS.Before(h.from) && c.TS.Before(h.to) {
				counts[key{c.TS.In(zone).Format("2006-01-02 15:04:05.000"), c.LinkID, c.CountryCode}]++
			}
		}
		for i, r := range stored {
			if at := storedAt[i]; !at.Before(h.from) && at.Before(h.to) {
				counts[key(r)]--
				skipped = skipped || storedSkipped[i]
			}
		}
		var add, surplus int64
		var want []string
		for k, n := range counts {
			for ; n > 0; n-- {
				add++
				want = append(want, k.wall+"|"+k.link+"|"+k.country)
			}
			for ; n < 0; n++ {
				surplus++
			}
		}
		if h.api == h.local && add == 0 {
			t.Errorf("hour %s matches, clicks and counts, yet is planned: %+v", h.from.In(zone).Format("15:04 MST"), p)
			continue
		}
		refused := (skipped && add > 0) || add-surplus != h.api-h.local
		anyRefused, anySurplus, anyAdd = anyRefused || refused, anySurplus || surplus > 0, anyAdd || add > 0
		if refused {
			if p.Refused == "" {
				t.Errorf("hour %s: the reference refuses it (skipped wall times %v, %d to add, %d surplus), the plan adds %d", h.from.In(zone).Format("15:04 MST"), skipped, add, surplus, len(p.Add))
			}
			continue
		}
		if p.Refused != "" {
			t.Errorf("hour %s refused: %s", h.from.In(zone).Format("15:04 MST"), p.Refused)
			continue
		}
		var got []string
		for _, c := range p.Add {
			got = append(got, store.WallKey(c.TS, zone)+"|"+c.LinkID+"|"+c.CountryCode)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("hour %s: planned %v, the reference %v", h.from.In(zone).Format("15:04 MST"), got, want)
		}
	}

	// Applied, no wall time, link and country is held more often than
	// Elido has it, unless the store held it so before.
	before := map[string]int{}
	for _, r := range stored {
		before[r.String()]++
	}
	elido := map[string]int{}
	for _, r := range asWritten(elidoClicks, zone) {
		elido[r.String()]++
	}
	res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil)
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("Apply: %v", r.Err)
		}
	}
	if !anyRefused && !anySurplus && anyAdd && (len(res) != 1 || !res[0].Matches()) {
		t.Errorf("the reference repairs every hour that differs, yet the day does not match once repaired: %+v", res)
	}
	after := map[string]int{}
	for _, r := range w.rows(t) {
		after[r]++
	}
	for k, n := range after {
		if n > max(elido[k], before[k]) {
			t.Errorf("%s: the store holds it %d times, Elido %d, the store before %d: a click written twice", k, n, elido[k], before[k])
		}
	}
}
