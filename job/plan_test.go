package job

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
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
	const links = 5000 // 5 pages a day
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
				w.lose(d, span(d*300, d*300+300)...)
			}
			return w
		}, false},
		{"shift_between_days", func() *planWorld {
			w := newPlanWorld(9, links)
			for d := 1; d <= 5; d++ {
				w.lose(d, span(0, 4)...)
			}
			// lnk_04000 moves a click from day 2 to day 3 in the store:
			// its sum over the run matches, its days do not.
			w.local[2][linkN(4000)]--
			w.local[3][linkN(4000)]++
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
