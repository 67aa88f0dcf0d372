package job

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// planWorld is a generated window: each side's clicks per day and link.
// Elido serves its gap days' clicks one by one and the other days as
// totals; the store is SQLite with the daily schema.
type planWorld struct {
	days, links int
	from        reconcile.Date
	api, local  []map[string]int64 // per day
	// extra are clicks Elido's daily count has on top of its links, per
	// day: its own numbers do not add up.
	extra map[int]int64
	srv   *elidotest.Server // once started
}

func newPlanWorld(days, links int) *planWorld {
	w := &planWorld{days: days, links: links, extra: map[int]int64{}}
	w.from, _ = reconcile.ParseDate("2026-10-01")
	for d := 0; d < days; d++ {
		api, local := map[string]int64{}, map[string]int64{}
		for n := 0; n < links; n++ {
			id := fmt.Sprintf("lnk_%05d", n)
			api[id], local[id] = int64(1+(n+d)%3), int64(1+(n+d)%3)
		}
		w.api, w.local = append(w.api, api), append(w.local, local)
	}
	return w
}

func linkN(n int) string { return fmt.Sprintf("lnk_%05d", n) }

// lose takes a click of each link on day d from the store.
func (w *planWorld) lose(d int, links ...int) {
	for _, n := range links {
		w.local[d][linkN(n)]--
	}
}

func span(from, to int) []int {
	var out []int
	for n := from; n < to; n++ {
		out = append(out, n)
	}
	return out
}

// start serves the world and returns the options and clients of a run.
func (w *planWorld) start(t *testing.T) (Options, Deps) {
	t.Helper()
	window := reconcile.Window{From: w.from, To: w.from.AddDays(w.days - 1), Loc: time.UTC}
	path := filepath.Join(t.TempDir(), "clicks.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := `CREATE TABLE click_counts (day TEXT NOT NULL, link_id TEXT NOT NULL, clicks INTEGER NOT NULL, PRIMARY KEY (day, link_id))`
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var clicks []elidotest.Click
	totals := map[string]int64{}
	for d := 0; d < w.days; d++ {
		day := w.from.AddDays(d)
		differs := w.extra[d] != 0
		for id, n := range w.local[d] {
			if n > 0 {
				if _, err := tx.Exec(`INSERT INTO click_counts VALUES (?, ?, ?)`, day.String(), id, n); err != nil {
					t.Fatal(err)
				}
			}
			differs = differs || w.api[d][id] != n
		}
		for id := range w.api[d] {
			differs = differs || w.api[d][id] != w.local[d][id]
		}
		if !differs {
			for _, n := range w.api[d] {
				totals[day.String()] += n
			}
			continue
		}
		totals[day.String()] = w.extra[d]
		for id, n := range w.api[d] {
			for i := int64(0); i < n; i++ {
				clicks = append(clicks, elidotest.Click{TS: day.Start(time.UTC).Add(12*time.Hour + time.Duration(i)*time.Second), LinkID: id, CountryCode: "PL"})
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	srv := elidotest.NewServer("ws", "key", clicks)
	t.Cleanup(srv.Close)
	srv.SetDailyTotals("UTC", totals)
	w.srv = srv
	client, err := elido.New(elido.Config{BaseURL: srv.URL(), APIKey: "key", WorkspaceID: "ws", RatePerMinute: 600000},
		elido.WithClock(time.Now, func(ctx context.Context, _ time.Duration) error { return ctx.Err() }))
	if err != nil {
		t.Fatal(err)
	}
	query, err := store.PresetQuery("daily")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Window: window, WorkspaceID: "ws", RunKey: "test", Store: dbtest.Parsed(t, store.ParseDSN, "sqlite:"+path),
		Query: query, Settle: 2 * time.Hour, Timeout: time.Hour, Drilldown: true, DrillMax: 100000}
	d := Deps{Elido: client, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return now }, Progress: noProgress{}}
	return o, d
}

// drillBoth drills the world's gaps across runs and day by day, and
// returns both results and drill-downs.
func drillBoth(t *testing.T, o Options, d Deps) (across, byDay reconcile.Result, a, b report.Drilldown) {
	t.Helper()
	st := openStore(t, o)
	res := compared(t, o, d, st)
	if len(res.Gaps()) == 0 {
		t.Fatal("the world has no gap")
	}
	var err error
	stage := drillStageOf(o, d, st)
	if across, a, err = drillDown(context.Background(), stage, res); err != nil {
		t.Fatal(err)
	}
	stage.dayByDay = true
	if byDay, b, err = drillDown(context.Background(), stage, res); err != nil {
		t.Fatal(err)
	}
	return across, byDay, a, b
}

// The planner drills generated windows to the same result as the per-day
// drill-down (the same links, days, countries and findings), in fewer
// requests when the links that differ recur, and in no more than one
// breakdown pass over the per-day cost when they do not.
func TestPlannerMatchesDayByDay(t *testing.T) {
	const links = 2500 // 3 pages a day
	tests := []struct {
		name  string
		world func() *planWorld
		// cheaper: the planner must spend fewer requests than per day.
		cheaper bool
	}{
		{"recurring", func() *planWorld {
			w := newPlanWorld(9, links)
			for d := 1; d <= 5; d++ {
				w.lose(d, span(0, 8)...)
			}
			w.lose(7, span(0, 8)...)
			return w
		}, true},
		{"disjoint", func() *planWorld {
			w := newPlanWorld(9, links)
			for d := 1; d <= 6; d++ {
				w.lose(d, span(d*300, d*300+300)...) // 300 links a day

			}
			return w
		}, false},
		{"shift_between_days", func() *planWorld {
			w := newPlanWorld(9, links)
			for d := 1; d <= 5; d++ {
				w.lose(d, span(0, 4)...)
			}
			// lnk_02000 moves a click from day 2 to day 3 in the store:
			// its sum over the run matches, its days do not.
			w.local[2][linkN(2000)]--
			w.local[3][linkN(2000)]++
			return w
		}, true},
		{"elido_does_not_add_up", func() *planWorld {
			w := newPlanWorld(9, links)
			for d := 2; d <= 6; d++ {
				w.lose(d, span(10, 16)...)
			}
			w.extra[4] = 7
			return w
		}, true},
		{"links_on_one_side_only", func() *planWorld {
			w := newPlanWorld(9, links)
			for d := 1; d <= 5; d++ {
				w.lose(d, span(0, 3)...)
			}
			w.local[2]["lnk_store_only"] = 4
			w.local[3]["lnk_store_only"] = 1
			w.api[4]["lnk_elido_only"] = 5
			w.api[5]["lnk_elido_only"] = 2
			for n := range 5 { // lost every click of the run
				w.local[1+n][linkN(20)] = 0
			}
			return w
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, d := tt.world().start(t)
			across, byDay, a, b := drillBoth(t, o, d)
			if len(byDay.Links) == 0 {
				t.Fatal("no link differs day by day: the world tests nothing")
			}
			// The planner says which days' rows rest on sums over the
			// run; day by day none does.
			bySums := slices.IndexFunc(across.Findings, func(f reconcile.Finding) bool { return f.Kind == reconcile.FindingLinksBySums })
			if (bySums >= 0) != (len(a.LinksBySums) > 0) || len(b.LinksBySums) > 0 {
				t.Errorf("links_by_sums finding at %d, days by sums %v planned and %v day by day", bySums, a.LinksBySums, b.LinksBySums)
			}
			if bySums >= 0 {
				across.Findings = slices.Delete(slices.Clone(across.Findings), bySums, bySums+1)
				if len(across.Findings) == 0 {
					across.Findings = nil
				}
			}
			for _, part := range []struct {
				name      string
				got, want any
			}{
				{"days", across.Days, byDay.Days},
				{"links", across.Links, byDay.Links},
				{"countries", across.Countries, byDay.Countries},
				{"findings", across.Findings, byDay.Findings},
			} {
				if diff := cmp.Diff(part.want, part.got); diff != "" {
					t.Errorf("%s (-day by day +planned):\n%s", part.name, diff)
				}
			}
			pages := pagesFor(links)
			switch {
			case tt.cheaper && a.Requests >= b.Requests:
				t.Errorf("planned %d requests, day by day %d: want fewer", a.Requests, b.Requests)
			case a.Requests > b.Requests+pages:
				t.Errorf("planned %d requests, day by day %d: want at most one breakdown pass (%d) more", a.Requests, b.Requests, pages)
			}
			t.Logf("requests: planned %d, day by day %d", a.Requests, b.Requests)
		})
	}
}

// The default budget (RECON_DRILLDOWN_MAX_REQUESTS=500) drills a 30-day
// backfill of a 100k-link workspace whose outage hit the same 200 links
// every day completely, at 600 requests a minute within the default
// RECON_TIMEOUT of 30 minutes: day by day it would need 3,060 requests.
func TestDefaultBudgetDrillsAMonthOfBackfill(t *testing.T) {
	const days, links, differing, budget, rate = 30, 100_000, 200, 500, 600.0
	rc := &runCounts{index: map[string]uint32{}, ids: make([]string, links)}
	start, _ := reconcile.ParseDate("2026-10-01")
	for k := range days {
		rc.addDay(start.AddDays(k))
		rc.links[k] = links
	}
	timeout := 30 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	b := newBudget(budget)
	b.rate, b.deadline = rate, drillDeadline(ctx, timeout)
	room := b.room()
	if room != budget {
		t.Fatalf("room %d, want the whole budget of %d: 25 minutes at %g a minute fit %g requests", room, budget, rate, 25*rate)
	}
	p := rc.plan(room)
	if !p.across {
		t.Fatalf("plan %+v with %d requests left: want across the run", p, room)
	}
	if p.switchDayByDay(0, differing, days, room-p.run) {
		t.Fatalf("plan %+v switches to per-day breakdowns with %d links differing", p, differing)
	}
	across := p.run + differing + 2*days
	dayByDay := p.perDay + 2*days
	if across > budget || dayByDay != 3060 {
		t.Errorf("across the run %d requests, day by day %d: want at most %d, and 3060", across, dayByDay, budget)
	}
	if took := time.Duration(float64(across) / rate * float64(time.Minute)); took > timeout-timeout/5 {
		t.Errorf("%d requests take %s at %g a minute, past the drill-down's %s", across, took, rate, timeout-timeout/5)
	}
	// The disjoint worst case: 200 other links a day switch back to
	// per-day breakdowns before the run's breakdown is done.
	if !p.switchDayByDay(p.run/2, differing*days/2, days, budget) {
		t.Errorf("plan %+v does not switch with %d links differing half way", p, differing*days/2)
	}
}

// A day's breakdown is never started when its pages and the day's
// countries and hours do not fit in what is left: the requests would buy
// nothing. Its links are counted unchecked, and the report says how many
// requests and how long the rest would need.
func TestDrillNeverStartsABreakdownItCannotFinish(t *testing.T) {
	const links = 5000 // 5 pages a day
	w := newPlanWorld(5, links)
	w.lose(1, span(0, 10)...)
	w.lose(3, span(0, 5)...) // the lesser gap: drilled second
	o, d := w.start(t)
	o.DrillMax = 5 + 2 + 4 // one whole day, and 4 requests
	res, got := drill(t, o, d)
	if got.Requests != 5+2+2 {
		t.Errorf("%d requests, want %d: one day whole, and the second's countries and hours only", got.Requests, 5+2+2)
	}
	known := 0 // the store's links of the day not drilled
	for _, n := range w.local[3] {
		if n > 0 {
			known++
		}
	}
	if got.UncheckedLinks != known || got.UncheckedUnknown {
		t.Errorf("unchecked links %s, want the store's %d of the day not drilled", got.Unchecked(), known)
	}
	if got.UndrilledDays != 1 || got.RestRequests != 5 {
		t.Errorf("undrilled days %d, rest %d requests: want 1 day and its 5 pages", got.UndrilledDays, got.RestRequests)
	}
	text := notes(res)
	for _, want := range []string{"not started rather than cut short", "the rest needs about 5 more requests"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the findings:\n%s", want, text)
		}
	}
	for _, l := range res.Links {
		if l.Date == w.from.AddDays(3) {
			t.Errorf("a link of the day not drilled is listed: %+v", l)
		}
	}
}

// With no request left, the store's links are not read either: how many
// links went unchecked is not known, and report.json says null, never 0.
func TestDrillUncheckedUnknownIsNull(t *testing.T) {
	w := newPlanWorld(3, 10)
	w.lose(1, 0, 1)
	o, d := w.start(t)
	o.DrillMax = 0
	_, got := drill(t, o, d)
	if !got.UncheckedUnknown || got.UndrilledDays != 1 || got.RestRequests != 3 {
		t.Errorf("drill-down %+v: want unchecked links unknown, 1 day and 3 requests left", got)
	}
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"unchecked_links":null`) {
		t.Errorf("report.json's drilldown %s: want unchecked_links null", data)
	}
}

// What a day holds no other day can spend: its breakdown, once started
// beside others, can finish.
func TestBudgetHolds(t *testing.T) {
	b := newBudget(10)
	h, ok := b.reserve(7)
	if !ok || b.room() != 3 {
		t.Fatalf("reserve 7 of 10: %v, room %d, want 3 left", ok, b.room())
	}
	if _, ok := b.reserve(4); ok {
		t.Error("4 more reserved with 3 left")
	}
	for i := range 3 {
		if !b.take() {
			t.Fatalf("request %d of the 3 nobody holds refused", i+1)
		}
	}
	if b.take() || b.left() {
		t.Error("a request spent from what a day holds")
	}
	for i := range 7 {
		if !h.take() {
			t.Fatalf("held request %d of 7 refused", i+1)
		}
	}
	if h.take() || b.used() != 10 {
		t.Errorf("spent %d, and the hold took one more: want 10 and no more", b.used())
	}
	h.release()
	if b.room() != 0 {
		t.Errorf("room %d after everything was spent", b.room())
	}
	// What a day does not spend goes back.
	b = newBudget(5)
	h, _ = b.reserve(4)
	h.take()
	h.release()
	if b.room() != 4 {
		t.Errorf("room %d after a hold of 4 spent 1, want 4", b.room())
	}
}

// A count too large for a day's 2 bytes is held aside, exact.
func TestRunCountsHoldLargeCounts(t *testing.T) {
	rc := newRunCounts()
	day, _ := reconcile.ParseDate("2026-10-01")
	k := rc.addDay(day)
	rc.add(k, "lnk_busy", 70_000)
	rc.add(k, "lnk_quiet", 5)
	rc.add(k, "lnk_busy", 65_535) // a second row adds up
	rc.add(k, "lnk_edge", 65_534)
	for id, want := range map[string]int64{"lnk_busy": 135_535, "lnk_quiet": 5, "lnk_edge": 65_534} {
		if got := rc.cell(k, rc.index[id]); got != want {
			t.Errorf("%s: %d, want %d", id, got, want)
		}
	}
	if *rc.sum[k] != 135_535+5+65_534 || rc.links[k] != 3 {
		t.Errorf("sum %d over %d links", *rc.sum[k], rc.links[k])
	}
	_, local := rc.tally(k).Sums()
	if *local != *rc.sum[k] {
		t.Errorf("the day's tally sums to %d, want %d", *local, *rc.sum[k])
	}
}
