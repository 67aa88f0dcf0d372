package job

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// The events preset's per-link query and day-total query as custom files,
// and each with lnk_docs counted twice.
const (
	linksQuery = `SELECT link_id, count(*) AS clicks FROM clicks
WHERE julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to) GROUP BY link_id`
	linksTwiceQuery = `SELECT link_id, count(*) AS clicks FROM (
  SELECT link_id, ts FROM clicks UNION ALL SELECT link_id, ts FROM clicks WHERE link_id = 'lnk_docs')
WHERE julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to) GROUP BY link_id`
	totalQuery = `SELECT count(*) AS clicks FROM clicks
WHERE julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to)`
	totalTwiceQuery = `SELECT count(*) AS clicks FROM (
  SELECT ts FROM clicks UNION ALL SELECT ts FROM clicks WHERE link_id = 'lnk_docs')
WHERE julianday(ts) >= julianday(:from) AND julianday(ts) < julianday(:to)`
)

// A store whose two queries disagree (STORE_QUERY_FILE's rows do not add
// up to STORE_TOTAL_QUERY_FILE's count) has no gap on a drilled day: the
// day is unverifiable, both queries are named, no link is blamed, and
// Elido is not either. The demo's real gaps (a lost burst, duplicates) are
// hidden by the disagreement, as any gap is: which count is right is not
// known.
func TestDrillStoreQueriesDisagree(t *testing.T) {
	tests := []struct {
		name         string
		links, total string
	}{
		{"total_counts_a_link_twice", linksQuery, totalTwiceQuery},
		{"links_count_a_link_twice", linksTwiceQuery, totalQuery},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, o, d := setup(t)
			q, err := store.CustomQuery(tt.links)
			if err != nil {
				t.Fatal(err)
			}
			if o.Query, err = q.WithTotal(tt.total); err != nil {
				t.Fatal(err)
			}
			res, _ := drill(t, o, d)
			for _, day := range res.Days {
				if day.IsGap() {
					t.Errorf("%s is %s %+d, want unverifiable: the store's queries disagree", day.Date, day.Status, *day.Delta)
				}
				if day.Status != reconcile.Unverifiable {
					continue
				}
				for _, name := range []string{"STORE_QUERY_FILE", "STORE_TOTAL_QUERY_FILE"} {
					if !strings.Contains(day.Reason, name) {
						t.Errorf("%s: reason %q does not name %s", day.Date, day.Reason, name)
					}
				}
				if day.Local != nil || day.Delta != nil {
					t.Errorf("%s: local %v, delta %v: a count the store's queries disagree on is not known", day.Date, day.Local, day.Delta)
				}
			}
			if c := res.Coverage(); c[reconcile.Unverifiable] == 0 {
				t.Errorf("coverage %v: no day unverifiable", c)
			}
			if len(res.Links) > 0 {
				t.Errorf("links blamed: %+v", res.Links)
			}
			found := false
			for _, f := range res.Findings {
				if strings.Contains(f.Message, "Elido's per-link") || f.Kind == reconcile.FindingUnexplained {
					t.Errorf("finding blames Elido: %s", f.Message)
				}
				found = found || f.Kind == reconcile.FindingStoreQueries
			}
			if !found {
				t.Errorf("no %s finding in:\n%s", reconcile.FindingStoreQueries, notes(res))
			}
			var api, local int64 // the days still trusted
			for _, day := range res.Days {
				if day.Status != reconcile.Unverifiable {
					api, local = api+*day.API, local+*day.Local
				}
			}
			if res.Totals.API != api || res.Totals.Local != local {
				t.Errorf("totals %d/%d, want %d/%d: a day taken out is out of the totals", res.Totals.API, res.Totals.Local, api, local)
			}
			// The whole run: the report, and so the exit code and Slack,
			// which read its days, see no gap.
			out, err := Run(context.Background(), o, d)
			if err != nil {
				t.Fatal(err)
			}
			if c := out.Report.Coverage; out.Report.Status != report.StatusIncomplete || c.Missing+c.Surplus > 0 {
				t.Errorf("report status %s, coverage %+v: want incomplete with no gap", out.Report.Status, c)
			}
		})
	}
}

// Queries that agree keep the demo's verdicts: the check costs nothing
// to a store that counts each click once.
func TestDrillStoreQueriesAgree(t *testing.T) {
	_, o, d := setup(t)
	q, err := store.CustomQuery(linksQuery)
	if err != nil {
		t.Fatal(err)
	}
	if o.Query, err = q.WithTotal(totalQuery); err != nil {
		t.Fatal(err)
	}
	res, _ := drill(t, o, d)
	if got := strings.Join(statuses(res), ", "); got != strings.Join(demoStatuses, ", ") {
		t.Errorf("days %s, want %s", got, strings.Join(demoStatuses, ", "))
	}
	for _, f := range res.Findings {
		if f.Kind == reconcile.FindingStoreQueries {
			t.Errorf("finding: %s", f.Message)
		}
	}
}

// sent sums the requests a fake has received.
func sent(srv *elidotest.Server) int {
	n := 0
	for _, c := range srv.Requests() {
		n += c
	}
	return n
}

// drilldown.requests counts the requests that reached Elido, no more: a
// request the budget allowed but that was never sent is not spent. Here
// the client's rate limit (ELIDO_RATE_LIMIT=60, a request a second, on a
// clock that does not move) delays the requests past the drill-down's
// deadline, 20 seconds away, after about 20 of them: those are refused
// before they go out. Day by day, no request is cancelled once written
// (one is counted sent, as Elido may have received it; the fake may not
// have).
func TestDrillCountsOnlyTheRequestsSent(t *testing.T) {
	w := newPlanWorld(9, 2500) // 3 pages a day
	for d := 1; d <= 7; d++ {
		w.lose(d, span(d*300, d*300+300)...) // day by day: 5 requests each
	}
	o, d := w.start(t)
	client, err := elido.New(elido.Config{BaseURL: w.srv.URL(), APIKey: "key", WorkspaceID: "ws", RatePerMinute: 60},
		elido.WithClock(time.Now, func(ctx context.Context, _ time.Duration) error { return ctx.Err() }))
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t, o)
	res := compared(t, o, d, st)
	before := sent(w.srv)
	d.Elido = client
	stage := drillStageOf(o, d, st)
	stage.dayByDay = true
	stage.limit = func(ctx context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, 20*time.Second)
	}
	_, got, err := drillDown(context.Background(), stage, res)
	if err != nil {
		t.Fatal(err)
	}
	w.srv.Close() // every request it has, answered
	if n := sent(w.srv) - before; got.Requests != n || n == 0 {
		t.Errorf("drilldown.requests %d, but Elido received %d requests", got.Requests, n)
	}
}

// A day whose store has few links (1 page by its estimate) while Elido
// has 20 pages of them: the budget fits the estimate, not 20 pages. Elido's
// first page (its links highest first, and the day's own count) shows at
// least 13 pages, so the breakdown stops there rather than spend the
// budget on pages that cannot make a whole breakdown; the day's countries
// and hours are read, and the day says what its links would need.
func TestDrillStopsABreakdownLongerThanTheStoreSays(t *testing.T) {
	w := newPlanWorld(2, 20_000)
	few := map[string]int64{}
	for n := range 100 {
		few[linkN(n)] = w.local[1][linkN(n)]
	}
	w.local[1] = few
	o, d := w.start(t)
	o.DrillMax = 1 + 2 + 5
	res, got := drill(t, o, d)
	if n := w.srv.Requests()["breakdown/link"]; n > 2 {
		t.Errorf("%d pages of the day's breakdown requested: want it stopped after the first (and the one read ahead)", n)
	}
	if n := w.srv.Requests()["breakdown/country"]; n != 1 {
		t.Errorf("%d country breakdowns, want the day's countries read", n)
	}
	if got.UndrilledDays != 1 || got.RestRequests < 13 {
		t.Errorf("drill-down %+v: want 1 day left, its rest at least 13 pages", got)
	}
	if text := notes(res); !strings.Contains(text, "stopped rather than cut short") {
		t.Errorf("no note of the stopped breakdown in:\n%s", text)
	}
	for _, l := range res.Links {
		t.Errorf("a link of a breakdown not read whole is listed: %+v", l)
	}
}
