package reconcile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// genDay is a generated day: Elido's clicks and the store's rows, shaped
// by the losses a test applies.
type genDay struct {
	date  Date
	loc   *time.Location
	hours []time.Time // each hour's start, and the day's end last
	api   []Click
	local []Click
	rng   *rand.Rand
}

// newGenDay draws a day of clicks in loc: about perHour clicks an hour at
// the day's peak (15:00), a fifth of it at night, on links links and three
// countries, from seed.
func newGenDay(t *testing.T, zone, date string, perHour float64, links int, seed uint64) *genDay {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	day, err := ParseDate(date)
	if err != nil {
		t.Fatal(err)
	}
	g := &genDay{date: day, loc: loc, rng: rand.New(rand.NewPCG(seed, 7))}
	start, end := day.Bounds(loc)
	for h := start; h.Before(end); h = h.Add(time.Hour) {
		g.hours = append(g.hours, h)
	}
	g.hours = append(g.hours, end)
	countries := []string{"PL", "DE", ""}
	for i := 0; i+1 < len(g.hours); i++ {
		wall := g.hours[i].In(loc).Hour()
		rate := perHour * (0.2 + 0.8*math.Exp(-math.Pow(float64(wall-15)/4, 2)))
		n := poisson(g.rng, rate)
		span := g.hours[i+1].Sub(g.hours[i])
		for range n {
			ts := g.hours[i].Add(time.Duration(g.rng.Int64N(int64(span/time.Millisecond))) * time.Millisecond).UTC()
			g.api = append(g.api, Click{TS: ts, LinkID: fmt.Sprintf("lnk_%d", g.rng.IntN(links)), CountryCode: countries[g.rng.IntN(3)]})
		}
	}
	slices.SortFunc(g.api, func(a, b Click) int { return a.TS.Compare(b.TS) })
	g.local = slices.Clone(g.api)
	return g
}

func poisson(r *rand.Rand, lambda float64) int {
	// Normal approximation above 30, Knuth's method below.
	if lambda > 30 {
		return max(0, int(math.Round(lambda+math.Sqrt(lambda)*r.NormFloat64())))
	}
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// at is the instant of a wall-clock time of the day, hh:mm:ss.
func (g *genDay) at(t *testing.T, clock string) time.Time {
	t.Helper()
	c, err := time.ParseInLocation("2006-01-02 15:04:05", g.date.String()+" "+clock, g.loc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// drop removes the store rows for which lose says so.
func (g *genDay) drop(lose func(c Click) bool) {
	g.local = slices.DeleteFunc(g.local, lose)
}

// outage drops every row in [from, to).
func (g *genDay) outage(from, to time.Time) {
	g.drop(func(c Click) bool { return !c.TS.Before(from) && c.TS.Before(to) })
}

// leak drops each row with probability p.
func (g *genDay) leak(p float64) {
	g.drop(func(Click) bool { return g.rng.Float64() < p })
}

// poller keeps, of each interval of iv aligned to the epoch, only the
// newest page clicks: a poller that asks for a fixed window newest first
// and does not follow next_cursor.
func (g *genDay) poller(iv time.Duration, page int) {
	byBin := map[int64][]int{}
	for i, c := range g.local {
		b := c.TS.UnixMilli() / iv.Milliseconds()
		byBin[b] = append(byBin[b], i)
	}
	lost := map[int]bool{}
	for _, idx := range byBin {
		if len(idx) > page {
			for _, i := range idx[:len(idx)-page] {
				lost[i] = true
			}
		}
	}
	out := g.local[:0]
	for i, c := range g.local {
		if !lost[i] {
			out = append(out, c)
		}
	}
	g.local = out
}

// duplicate repeats n rows from [from, to) once each.
func (g *genDay) duplicate(n int, from, to time.Time) {
	var in []Click
	for _, c := range g.local {
		if !c.TS.Before(from) && c.TS.Before(to) {
			in = append(in, c)
		}
	}
	for i := 0; i < n && i < len(in); i++ {
		g.local = append(g.local, in[i*len(in)/n])
	}
}

// evidence is the day's evidence: every hour's counts and, with raw, the
// clicks of the hours that differ.
func (g *genDay) evidence(raw bool) DayEvidence {
	ev := DayEvidence{Date: g.date}
	for i := 0; i+1 < len(g.hours); i++ {
		from, to := g.hours[i], g.hours[i+1]
		in := func(c Click) bool { return !c.TS.Before(from) && c.TS.Before(to) }
		var a, l []Click
		for _, c := range g.api {
			if in(c) {
				a = append(a, c)
			}
		}
		for _, c := range g.local {
			if in(c) {
				l = append(l, c)
			}
		}
		ev.Hours = append(ev.Hours, HourPair{Start: from, API: int64(len(a)), Local: int64(len(l))})
		if raw && len(a) != len(l) || raw && !sameMultiset(a, l) {
			ev.Raw = append(ev.Raw, RawHour{From: from, To: to, API: a, Local: l})
		}
	}
	return ev
}

func sameMultiset(a, b []Click) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[clickKey]int{}
	for _, c := range a {
		m[keyOf(c)]++
	}
	for _, c := range b {
		m[keyOf(c)]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func diagKinds(dd DayDiagnosis) []string {
	var out []string
	for _, d := range dd.Diagnoses {
		out = append(out, d.Kind)
	}
	return out
}

func findDiag(t *testing.T, dd DayDiagnosis, kind string) Diagnosis {
	t.Helper()
	for _, d := range dd.Diagnoses {
		if d.Kind == kind {
			return d
		}
	}
	t.Fatalf("no %s diagnosis in %v (%s)", kind, diagKinds(dd), describe(dd))
	return Diagnosis{}
}

func describe(dd DayDiagnosis) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gap %d, evidence %s, note %q", dd.Gap, dd.Evidence, dd.Note)
	for _, d := range dd.Diagnoses {
		fmt.Fprintf(&b, "\n  %s %d (%.3f) %s", d.Kind, d.Clicks, d.Share, d.Message)
	}
	return b.String()
}

func lostIn(g *genDay, from, to time.Time) int64 {
	count := func(cs []Click) (n int64) {
		for _, c := range cs {
			if !c.TS.Before(from) && c.TS.Before(to) {
				n++
			}
		}
		return n
	}
	return count(g.api) - count(g.local)
}

func TestDiagnoseShapes(t *testing.T) {
	for _, raw := range []bool{true, false} {
		ev := "hourly"
		if raw {
			ev = "raw"
		}
		t.Run("clean_day_gets_none_"+ev, func(t *testing.T) {
			g := newGenDay(t, "Europe/Warsaw", "2026-11-25", 300, 20, 1)
			dd := Diagnose(g.evidence(raw), g.loc)
			if len(dd.Diagnoses) != 0 || dd.Gap != 0 {
				t.Fatalf("a clean day was diagnosed: %s", describe(dd))
			}
		})
		t.Run("a_few_lost_clicks_are_noise_"+ev, func(t *testing.T) {
			g := newGenDay(t, "Europe/Warsaw", "2026-11-25", 300, 20, 2)
			n := 0
			g.drop(func(Click) bool { n++; return n%1500 == 0 }) // about 4 clicks
			dd := Diagnose(g.evidence(raw), g.loc)
			if len(dd.Diagnoses) != 0 || dd.Note == "" {
				t.Fatalf("noise was diagnosed: %s", describe(dd))
			}
		})
		t.Run("outage_"+ev, func(t *testing.T) {
			g := newGenDay(t, "Europe/Warsaw", "2026-11-25", 300, 20, 3)
			from, to := g.at(t, "10:07:13"), g.at(t, "10:31:40")
			g.outage(from, to)
			dd := Diagnose(g.evidence(raw), g.loc)
			if got := diagKinds(dd); !slices.Equal(got, []string{DiagOutage}) {
				t.Fatalf("kinds %v, want one outage: %s", got, describe(dd))
			}
			o := findDiag(t, dd, DiagOutage)
			want := lostIn(g, from, to)
			if o.Clicks != want || o.Share != 1 {
				t.Errorf("outage explains %d clicks (share %v), want %d (1): %s", o.Clicks, o.Share, want, describe(dd))
			}
			if raw {
				if o.From.Before(from) || o.From.Sub(from) > time.Minute || o.To.After(to) || to.Sub(o.To) > time.Minute {
					t.Errorf("outage window %s..%s, want within a minute inside %s..%s", o.From, o.To, from, to)
				}
				if !strings.Contains(o.Message, "longer than Elido's ~20-minute retry window") || o.Links == nil || *o.Links == 0 {
					t.Errorf("message %q, links %v", o.Message, o.Links)
				}
			} else if !o.From.Equal(g.at(t, "10:00:00")) || !o.To.Equal(g.at(t, "11:00:00")) {
				t.Errorf("hourly outage window %s..%s, want 10:00..11:00", o.From, o.To)
			}
		})
		t.Run("steady_leak_"+ev, func(t *testing.T) {
			g := newGenDay(t, "America/New_York", "2026-11-25", 200, 20, 4)
			g.leak(0.05)
			dd := Diagnose(g.evidence(raw), g.loc)
			if got := diagKinds(dd); !slices.Equal(got, []string{DiagSteadyLeak}) {
				t.Fatalf("kinds %v, want one steady leak: %s", got, describe(dd))
			}
			l := findDiag(t, dd, DiagSteadyLeak)
			if l.Share != 1 || math.Abs(l.Rate-0.05) > 0.015 || !strings.Contains(l.Message, "about 1 in 1") {
				t.Errorf("leak %+v", l)
			}
		})
		t.Run("busy_intervals_"+ev, func(t *testing.T) {
			g := newGenDay(t, "Europe/Warsaw", "2026-11-25", 600, 20, 5)
			g.poller(5*time.Minute, 45)
			dd := Diagnose(g.evidence(raw), g.loc)
			if got := diagKinds(dd); !slices.Equal(got, []string{DiagBusy}) {
				t.Fatalf("kinds %v, want busy intervals: %s", got, describe(dd))
			}
			b := findDiag(t, dd, DiagBusy)
			if b.Share < 0.95 {
				t.Errorf("busy intervals explain %.3f of the gap: %s", b.Share, describe(dd))
			}
			if raw && (b.IntervalS != 300 || b.Threshold > 45 || b.Threshold < 30) {
				t.Errorf("interval %d s, threshold %d; want 300 s and at most the page of 45: %s", b.IntervalS, b.Threshold, b.Message)
			}
			if !raw && b.IntervalS != 3600 {
				t.Errorf("hourly busy interval %d s, want 3600", b.IntervalS)
			}
		})
	}
	// Rows repeating another row are duplicates where the rows were
	// compared; from hourly counts alone nothing proves a repeat.
	g := newGenDay(t, "Europe/Warsaw", "2026-11-25", 300, 20, 6)
	g.duplicate(12, g.at(t, "03:10:00"), g.at(t, "03:40:00"))
	for _, raw := range []bool{true, false} {
		dd := Diagnose(g.evidence(raw), g.loc)
		want := map[bool]string{true: DiagDuplicates, false: DiagUnexplained}[raw]
		if got := diagKinds(dd); !slices.Equal(got, []string{want}) {
			t.Fatalf("raw %v: kinds %v, want %s: %s", raw, got, want, describe(dd))
		}
		if d := findDiag(t, dd, want); d.Clicks != 12 || d.Share != 1 || raw && len(dd.Duplicates) != 12 {
			t.Errorf("raw %v: %+v, marks %d", raw, d, len(dd.Duplicates))
		}
	}
}

func TestDiagnoseMixture(t *testing.T) {
	g := newGenDay(t, "Europe/Warsaw", "2026-11-25", 600, 30, 11)
	from, to := g.at(t, "04:05:00"), g.at(t, "04:50:00")
	g.outage(from, to)
	g.poller(5*time.Minute, 45)
	g.leak(0.03)
	g.duplicate(9, g.at(t, "20:00:00"), g.at(t, "20:30:00"))
	// Rows the store has and Elido has not, repeating nothing: no shape.
	for i := range 7 {
		g.local = append(g.local, Click{TS: g.at(t, fmt.Sprintf("22:0%d:00", i)), LinkID: "lnk_own", CountryCode: "PL"})
	}
	dd := Diagnose(g.evidence(true), g.loc)
	want := []string{DiagOutage, DiagBusy, DiagDuplicates, DiagSteadyLeak, DiagUnexplained}
	if got := diagKinds(dd); !slices.Equal(got, want) {
		t.Fatalf("kinds %v, want %v: %s", got, want, describe(dd))
	}
	var sum float64
	var clicks int64
	for _, d := range dd.Diagnoses {
		sum += d.Share
		clicks += d.Clicks
	}
	if clicks != dd.Gap || math.Abs(sum-1) > 0.01 {
		t.Errorf("diagnoses explain %d of %d clicks, shares sum to %.3f: %s", clicks, dd.Gap, sum, describe(dd))
	}
	o := findDiag(t, dd, DiagOutage)
	if o.From.Before(from) || o.To.After(to) || to.Sub(o.From) < 40*time.Minute {
		t.Errorf("outage %s..%s, want inside %s..%s", o.From, o.To, from, to)
	}
	if l := findDiag(t, dd, DiagSteadyLeak); math.Abs(l.Rate-0.03) > 0.01 {
		t.Errorf("leak rate %.3f, want about 0.03", l.Rate)
	}
	if u := findDiag(t, dd, DiagUnexplained); u.Clicks < 7 {
		t.Errorf("the store's own 7 rows are not in the remainder: %+v", u)
	}
}

func TestDiagnoseZones(t *testing.T) {
	tests := []struct {
		name, zone, date string
		hours            int
		from, to         string // the outage, wall clock
	}{
		{"spring_forward_23_hours", "Europe/Warsaw", "2026-03-29", 23, "03:10:00", "03:50:00"},
		{"fall_back_25_hours", "Europe/Warsaw", "2026-10-25", 25, "05:10:00", "05:55:00"},
		{"quarter_hour_offset", "Asia/Kathmandu", "2026-11-25", 24, "13:20:00", "14:10:00"},
		{"half_hour_dst", "Australia/Lord_Howe", "2026-10-04", 24, "12:00:00", "12:40:00"},
	}
	for _, tt := range tests {
		for _, raw := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s_raw_%v", tt.name, raw), func(t *testing.T) {
				g := newGenDay(t, tt.zone, tt.date, 400, 10, 21)
				if got := len(g.hours) - 1; got != tt.hours && tt.zone != "Australia/Lord_Howe" {
					t.Fatalf("%d hours, want %d", got, tt.hours)
				}
				clean := Diagnose(g.evidence(raw), g.loc)
				if len(clean.Diagnoses) != 0 {
					t.Fatalf("clean day diagnosed: %s", describe(clean))
				}
				from, to := g.at(t, tt.from), g.at(t, tt.to)
				g.outage(from, to)
				g.leak(0.04)
				dd := Diagnose(g.evidence(raw), g.loc)
				o := findDiag(t, dd, DiagOutage)
				findDiag(t, dd, DiagSteadyLeak)
				if raw && (o.From.Before(from) || o.To.After(to) || to.Sub(o.From) < 30*time.Minute) {
					t.Errorf("outage %s..%s, want inside %s..%s", o.From, o.To, from, to)
				}
				if !raw && (o.From.After(from) || o.To.Before(to.Add(-time.Hour))) {
					t.Errorf("hourly outage %s..%s, want covering %s..%s", o.From, o.To, from, to)
				}
				if len(dd.Timeline) == 0 {
					t.Error("no timeline")
				}
			})
		}
	}
}

// Many clean and lightly leaking days, none of which may get a shape it
// does not have.
func TestDiagnoseNoiseNeverAShape(t *testing.T) {
	for seed := uint64(100); seed < 130; seed++ {
		g := newGenDay(t, "Europe/Warsaw", "2026-11-25", 300, 20, seed)
		g.leak(0.02)
		for _, raw := range []bool{true, false} {
			dd := Diagnose(g.evidence(raw), g.loc)
			for _, d := range dd.Diagnoses {
				if d.Kind != DiagSteadyLeak && d.Kind != DiagUnexplained {
					t.Errorf("seed %d raw %v: a steady leak was called %s: %s", seed, raw, d.Kind, describe(dd))
				}
			}
		}
	}
}

func TestDiagnoseTable(t *testing.T) {
	loc := time.UTC
	day, _ := ParseDate("2026-11-25")
	start := day.Start(loc)
	hours := func(api, local []int64) []HourPair {
		var out []HourPair
		for i := range api {
			out = append(out, HourPair{Start: start.Add(time.Duration(i) * time.Hour), API: api[i], Local: local[i]})
		}
		return out
	}
	flat := func(n int64) []int64 {
		out := make([]int64, 24)
		for i := range out {
			out[i] = n
		}
		return out
	}
	t.Run("no_hours_no_diagnosis", func(t *testing.T) {
		dd := Diagnose(DayEvidence{Date: day}, loc)
		if len(dd.Diagnoses) != 0 || dd.Note == "" {
			t.Fatalf("%s", describe(dd))
		}
	})
	t.Run("store_empty_for_two_hours", func(t *testing.T) {
		local := flat(100)
		local[2], local[3] = 0, 0
		two := 2
		dd := Diagnose(DayEvidence{Date: day, Hours: hours(flat(100), local), LinksLost: &two}, loc)
		o := findDiag(t, dd, DiagOutage)
		if o.Clicks != 200 || !o.From.Equal(start.Add(2*time.Hour)) || !o.To.Equal(start.Add(4*time.Hour)) || o.Links == nil || *o.Links != 2 {
			t.Fatalf("%+v", o)
		}
		if !strings.Contains(o.Message, "02:00 UTC–04:00 UTC") || !strings.Contains(o.Message, "2 hours") {
			t.Errorf("message %q", o.Message)
		}
	})
	t.Run("raw_clicks_not_adding_up_fall_back_to_hours", func(t *testing.T) {
		local := flat(100)
		local[5] = 40
		ev := DayEvidence{Date: day, Hours: hours(flat(100), local),
			Raw: []RawHour{{From: start.Add(5 * time.Hour), To: start.Add(6 * time.Hour)}}}
		dd := Diagnose(ev, loc)
		if dd.Evidence != EvidenceHourly || !strings.Contains(dd.Note, "do not add up") {
			t.Fatalf("%s", describe(dd))
		}
		if o := findDiag(t, dd, DiagOutage); o.Clicks != 60 {
			t.Errorf("%+v", o)
		}
	})
}

// A mixture read from hourly counts alone: hours the store recorded
// nothing in, busy hours losing what exceeds a page, and a leak
// everywhere, each named once.
func TestDiagnoseHourlyMixture(t *testing.T) {
	g := newGenDay(t, "Europe/Warsaw", "2026-11-25", 600, 30, 12)
	g.outage(g.at(t, "04:00:00"), g.at(t, "06:00:00"))
	g.poller(5*time.Minute, 45)
	g.leak(0.03)
	dd := Diagnose(g.evidence(false), g.loc)
	want := []string{DiagOutage, DiagBusy, DiagSteadyLeak}
	if got := diagKinds(dd); !slices.Equal(got[:min(3, len(got))], want) {
		t.Fatalf("kinds %v, want %v first: %s", got, want, describe(dd))
	}
	if o := findDiag(t, dd, DiagOutage); !o.From.Equal(g.at(t, "04:00:00")) || !o.To.Equal(g.at(t, "06:00:00")) {
		t.Errorf("outage %s..%s, want 04:00..06:00", o.From, o.To)
	}
}

// A quiet day: its hours expect too few lost clicks for a test of their
// own, pooled they still show the leak; and an outage of a handful of
// clicks is still one.
func TestDiagnoseQuietDay(t *testing.T) {
	for seed := uint64(40); seed < 50; seed++ {
		g := newGenDay(t, "America/Sao_Paulo", "2026-11-25", 30, 5, seed)
		g.leak(0.1)
		for _, raw := range []bool{true, false} {
			dd := Diagnose(g.evidence(raw), g.loc)
			for _, d := range dd.Diagnoses {
				if d.Kind != DiagSteadyLeak && d.Kind != DiagUnexplained {
					t.Errorf("seed %d raw %v: a quiet leak was called %s: %s", seed, raw, d.Kind, describe(dd))
				}
			}
			if seed == 40 {
				findDiag(t, dd, DiagSteadyLeak)
			}
		}
	}
	g := newGenDay(t, "America/Sao_Paulo", "2026-11-25", 30, 5, 7)
	g.outage(g.at(t, "13:00:00"), g.at(t, "13:40:00"))
	dd := Diagnose(g.evidence(true), g.loc)
	if got := diagKinds(dd); !slices.Equal(got, []string{DiagOutage}) {
		t.Fatalf("kinds %v, want an outage: %s", got, describe(dd))
	}
}

// Lost clicks that share their instant and link with a recorded one, in
// the busy intervals, are said: a poller resuming after the last
// (ts, link_id) it saw skips them.
func TestDiagnoseBusySkipsSharedPairs(t *testing.T) {
	g := newGenDay(t, "Europe/Warsaw", "2026-11-25", 600, 20, 5)
	g.poller(5*time.Minute, 45)
	busy := 0
	for i, c := range g.local {
		if h := c.TS.In(g.loc).Hour(); h == 15 && i%4 == 0 && busy < 10 {
			g.api = append(g.api, Click{TS: c.TS, LinkID: c.LinkID, CountryCode: "SE"}) // lost: the store never saw it
			busy++
		}
	}
	slices.SortFunc(g.api, func(a, b Click) int { return a.TS.Compare(b.TS) })
	dd := Diagnose(g.evidence(true), g.loc)
	b := findDiag(t, dd, DiagBusy)
	if !strings.Contains(b.Message, "10 lost clicks share their instant and link with a click the store recorded") {
		t.Errorf("message %q does not count the 10 shared pairs: %s", b.Message, describe(dd))
	}
	if plain := findDiag(t, Diagnose(func() DayEvidence {
		g := newGenDay(t, "Europe/Warsaw", "2026-11-25", 600, 20, 5)
		g.poller(5*time.Minute, 45)
		return g.evidence(true)
	}(), g.loc), DiagBusy); strings.Contains(plain.Message, "share their instant") {
		t.Errorf("no pair is shared, yet %q", plain.Message)
	}
}

// From hourly counts, the store's rows of the hours with a surplus name
// duplicates: the rows that repeat another row exactly, at most each
// hour's surplus; the rest of the surplus stays unexplained.
func TestDiagnoseHourlyDuplicates(t *testing.T) {
	loc := time.UTC
	day, _ := ParseDate("2026-11-25")
	start := day.Start(loc)
	// hour is one hour's store rows: distinct rows, then twins of the
	// first ones (twins[j] copies of row j).
	type hour struct {
		distinct int
		twins    []int
	}
	rowsOf := func(i int, h hour) []Click {
		var rows []Click
		for j := range h.distinct {
			rows = append(rows, Click{TS: start.Add(time.Duration(i)*time.Hour + time.Duration(j)*time.Second), LinkID: fmt.Sprintf("lnk_%d", j%4), CountryCode: "PL"})
		}
		for j, n := range h.twins {
			for range n {
				rows = append(rows, rows[j])
			}
		}
		return rows
	}
	tests := []struct {
		name    string
		rows    map[int]hour // by hour of the day; the others hold Elido's 100
		kinds   []string
		dupes   int64
		share   float64
		links   int
		from    int // the duplicates' span, in hours of the day
		to      int
		unexpl  int64
		unshare float64
	}{
		{name: "repeats_explain_the_surplus", rows: map[int]hour{10: {100, []int{1, 1, 1, 3}}, 11: {100, []int{1, 1, 1, 1}}},
			kinds: []string{DiagDuplicates}, dupes: 10, share: 1, links: 4, from: 10, to: 12},
		{name: "fewer_repeats_than_surplus", rows: map[int]hour{10: {106, []int{1, 1, 1, 1}}},
			kinds: []string{DiagDuplicates, DiagUnexplained}, dupes: 4, share: 0.4, links: 4, from: 10, to: 11, unexpl: 6, unshare: 0.6},
		{name: "repeats_beyond_surplus_count_up_to_it", rows: map[int]hour{9: {98, []int{2, 0, 0, 3}}, 14: {102, nil}},
			kinds: []string{DiagDuplicates}, dupes: 3, share: 0.6, links: 2, from: 9, to: 10},
		{name: "no_repeats", rows: map[int]hour{10: {110, nil}},
			kinds: []string{DiagUnexplained}, unexpl: 10, unshare: 1},
		{name: "too_few_repeats", rows: map[int]hour{10: {108, []int{2}}},
			kinds: []string{DiagUnexplained}, unexpl: 10, unshare: 1},
		{name: "clean_day", rows: map[int]hour{10: {100, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := DayEvidence{Date: day}
			for i := range 24 {
				p := HourPair{Start: start.Add(time.Duration(i) * time.Hour), API: 100, Local: 100}
				if h, ok := tt.rows[i]; ok {
					rows := rowsOf(i, h)
					p.Local = int64(len(rows))
					if p.Local > p.API {
						ev.Rows = append(ev.Rows, RowHour{From: p.Start, To: p.Start.Add(time.Hour), Rows: rows})
					}
				}
				ev.Hours = append(ev.Hours, p)
			}
			dd := Diagnose(ev, loc)
			if !slices.Equal(diagKinds(dd), tt.kinds) {
				t.Fatalf("kinds %v, want %v: %s", diagKinds(dd), tt.kinds, describe(dd))
			}
			var sum float64
			for _, d := range dd.Diagnoses {
				sum += d.Share
			}
			if sum > 1 {
				t.Errorf("shares sum to %v: %s", sum, describe(dd))
			}
			if tt.dupes > 0 {
				d := findDiag(t, dd, DiagDuplicates)
				if d.Clicks != tt.dupes || d.Share != tt.share || d.Links == nil || *d.Links != tt.links {
					t.Errorf("duplicates %d (%v) on %v links, want %d (%v) on %d: %s", d.Clicks, d.Share, d.Links, tt.dupes, tt.share, tt.links, describe(dd))
				}
				if !slices.Equal(d.Evidence, []string{EvidenceHourly, EvidenceRows}) {
					t.Errorf("evidence %v", d.Evidence)
				}
				if !d.From.Equal(start.Add(time.Duration(tt.from)*time.Hour)) || !d.To.Equal(start.Add(time.Duration(tt.to)*time.Hour)) {
					t.Errorf("span %s..%s, want hours %d..%d", d.From, d.To, tt.from, tt.to)
				}
				span := HourSpan(d.From, d.To, loc)
				if !strings.Contains(d.Message, fmt.Sprintf("%d rows that repeat another row exactly", tt.dupes)) || !strings.Contains(d.Message, span) ||
					!strings.Contains(d.Message, "X-Webhook-Delivery") || !strings.Contains(d.Message, "raw clicks were not read") {
					t.Errorf("message %q", d.Message)
				}
				if len(dd.Duplicates) != int(tt.dupes) {
					t.Errorf("%d duplicated instants, want %d", len(dd.Duplicates), tt.dupes)
				}
			}
			if tt.unexpl > 0 {
				if u := findDiag(t, dd, DiagUnexplained); u.Clicks != tt.unexpl || u.Share != tt.unshare {
					t.Errorf("unexplained %d (%v), want %d (%v)", u.Clicks, u.Share, tt.unexpl, tt.unshare)
				}
			}
		})
	}
}
