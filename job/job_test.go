package job

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/demo"
	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history/historytest"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// now is a night well after the demo's days have settled.
var now = time.Date(2026, 10, 28, 3, 0, 0, 0, time.UTC)

// setup starts the demo's world (day 2 lost clicks, day 3 has duplicates)
// and returns the options and clients of a run over it.
func setup(t *testing.T) (*demo.World, Options, Deps) {
	t.Helper()
	loc, err := time.LoadLocation(demo.Zone)
	if err != nil {
		t.Fatal(err)
	}
	world, err := demo.Start(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(world.Close)
	client, query := testClient(t, world.Elido.URL(), demo.Key, demo.Workspace)
	o := Options{
		Window:      world.Window,
		WorkspaceID: demo.Workspace,
		RunKey:      "test",
		Store:       dbtest.Parsed(t, store.ParseDSN, world.StoreDSN),
		Query:       query,
		Settle:      2 * time.Hour,
		Timeout:     time.Minute,
		Drilldown:   true,
		DrillMax:    500,
		ReportDir:   filepath.Join(t.TempDir(), "reports"),
	}
	d := Deps{Elido: client, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return now }, Progress: noProgress{}}
	return world, o, d
}

// vanished returns what parse reads of a SQLite file whose folder is gone
// since: a store that cannot be opened.
func vanished(t *testing.T, parse func(string) (dsn.Target, error)) dsn.Target {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "absent")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "clicks.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	target := dbtest.Parsed(t, parse, "sqlite:"+path)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	return target
}

// migratedHistory migrates the history at rawDSN and returns it as Run
// opens it.
func migratedHistory(t *testing.T, rawDSN string) dsn.Target {
	t.Helper()
	return historytest.Target(t, rawDSN)
}

// The stages of Run, over o and d.
func elidoReadOf(o Options, d Deps) elidoRead {
	return elidoRead{client: d.Elido, window: o.Window, retention: o.Retention, now: d.Now(), log: d.Log, progress: d.Progress}
}

func storeReadOf(o Options, d Deps, st *store.Store) storeRead {
	return storeRead{store: st, query: o.Query, window: o.Window, log: d.Log, progress: d.Progress}
}

func drillStageOf(o Options, d Deps, st *store.Store) drillStage {
	return drillStage{on: o.Drilldown, limit: d.DrillLimit, timeout: o.Timeout,
		driller: driller{client: d.Elido, store: st, query: o.Query, window: o.Window, now: d.Now(),
			retention: o.Retention, max: o.DrillMax, log: d.Log, progress: d.Progress}}
}

func openStore(t *testing.T, o Options) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), o.Store, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func statuses(res reconcile.Result) []string {
	var out []string
	for _, d := range res.Days {
		out = append(out, d.Date.String()+" "+string(d.Status))
	}
	return out
}

var demoStatuses = []string{"2026-10-23 match", "2026-10-24 missing", "2026-10-25 surplus", "2026-10-26 match"}

// Run writes the report and returns what it found; without a history or
// Slack nothing else can fail.
func TestRunWritesTheReport(t *testing.T) {
	_, o, d := setup(t)
	out, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(demoStatuses, statuses(out.Result)); diff != "" {
		t.Errorf("days (-want +got):\n%s", diff)
	}
	for _, f := range out.Failures {
		t.Errorf("unexpected failure of the %s: %v", f.Part, f.Err)
	}
	if _, err := os.Stat(filepath.Join(out.Dir, "report.json")); err != nil {
		t.Errorf("report.json not written: %v", err)
	}
	if out.Report.Status != report.StatusDiscrepancies || out.Report.Drilldown.Mode != report.DrillBreakdown {
		t.Errorf("status %q, drill-down %q", out.Report.Status, out.Report.Drilldown.Mode)
	}
}

// A store that cannot be opened leaves every day unverifiable and is the
// Outcome's store error; Elido is still read and the report written.
func TestRunWithoutTheStore(t *testing.T) {
	_, o, d := setup(t)
	o.Store = vanished(t, store.ParseDSN)
	out, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	if out.Err(PartStore) == nil || out.Err(PartElido) != nil {
		t.Errorf("store error %v, elido error %v; want only the store's", out.Err(PartStore), out.Err(PartElido))
	}
	for _, day := range out.Result.Days {
		if day.Status != reconcile.Unverifiable {
			t.Errorf("%s is %s, want unverifiable", day.Date, day.Status)
		}
	}
}

// A night whose store cannot be opened names its report, and its recorded
// run, after the identity the same STORE_DSN last had, so that the trend
// keeps the night in the store's series (the simulation's seeds 4 to 10 on
// PostgreSQL: the store gone for a night made a series of its own, under
// the id of how STORE_DSN spells it).
func TestRunWithoutTheStoreKeepsItsIdentity(t *testing.T) {
	_, o, d := setup(t)
	o.History = migratedHistory(t, "sqlite:"+filepath.Join(t.TempDir(), "history.db"))
	o.LegacyStoreID = "st_as_store_dsn_spells_it"
	first, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	identity := first.Report.StoreID
	if identity == o.LegacyStoreID || identity == "" {
		t.Fatalf("the first run names the store %q, want its identity", identity)
	}
	o.Store, o.RunKey = vanished(t, store.ParseDSN), "test-2"
	down, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	if down.Err(PartStore) == nil {
		t.Fatal("the store was opened")
	}
	if down.Report.StoreID != identity {
		t.Errorf("the night without its store names it %q, want %q, the identity it last had", down.Report.StoreID, identity)
	}

	// Without a history to remember it, the report names no store: the
	// trend counts it as the one store its workspace reads in the zone.
	o.History = dsn.Target{}
	if alone, err := Run(context.Background(), o, d); err != nil || alone.Report.StoreID != "" {
		t.Errorf("without a history: %q, %v; want no store", alone.Report.StoreID, err)
	}
}

// Days older than Elido's retention are unknown without a request; the
// rest are read.
func TestReadElidoRetention(t *testing.T) {
	world, o, d := setup(t)
	o.Retention = 3 // with its day of margin, the oldest kept is 2026-10-26
	api, _, err := readElido(context.Background(), elidoReadOf(o, d))
	if err != nil {
		t.Fatal(err)
	}
	for _, day := range o.Window.Days() {
		old := day.String() < "2026-10-26"
		if got := api[day].Err != nil; got != old {
			t.Errorf("%s unknown: %v, want %v (%v)", day, got, old, api[day].Err)
		}
	}
	if got := world.Elido.Requests()["timeseries"]; got != 1 {
		t.Errorf("%d /timeseries requests, want 1 for the kept day", got)
	}
}

// When /timeseries and /summary disagree for a chunk, each day's own
// summary is asked, so only the day that disagrees is left out.
func TestReadElidoSummaryPerDay(t *testing.T) {
	world, o, d := setup(t)
	world.Elido.SetFaults(elidotest.Fault{Kind: elidotest.SummaryOff, Offset: 5, Date: "2026-10-24"})
	_, checks, err := readElido(context.Background(), elidoReadOf(o, d))
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != o.Window.Len() {
		t.Fatalf("summary checks %+v, want one per day", checks)
	}
	for _, c := range checks {
		if c.From != c.To {
			t.Errorf("check %s..%s, want one day", c.From, c.To)
		}
	}
}

// drill runs the drill-down stage over the demo's compared days.
func drill(t *testing.T, o Options, d Deps) (reconcile.Result, report.Drilldown) {
	t.Helper()
	st := openStore(t, o)
	res, dr, err := drillDown(context.Background(), drillStageOf(o, d, st), compared(t, o, d, st))
	if err != nil {
		t.Fatalf("drill-down: %v", err)
	}
	return res, dr
}

// compared reads both sides of the demo's days and compares them: the
// stages before the drill-down.
func compared(t *testing.T, o Options, d Deps, st *store.Store) reconcile.Result {
	t.Helper()
	api, summaries, err := readElido(context.Background(), elidoReadOf(o, d))
	if err != nil {
		t.Fatal(err)
	}
	local, err := readTotals(context.Background(), storeReadOf(o, d, st))
	if err != nil {
		t.Fatal(err)
	}
	return reconcile.Compare(reconcile.Input{Window: o.Window, Now: now, Settle: o.Settle, API: api, Local: local, Summaries: summaries})
}

func notes(res reconcile.Result) string {
	var b strings.Builder
	for _, f := range res.Findings {
		b.WriteString(f.Message + "\n")
	}
	return b.String()
}

// The drill-down spends no more requests than RECON_DRILLDOWN_MAX_REQUESTS
// allows, and says what it could not read.
func TestDrillDownBudget(t *testing.T) {
	for _, tt := range []struct {
		name string
		max  int
		mode string
	}{
		{"nothing_left", 0, report.DrillBreakdown},
		{"one_request", 1, report.DrillBreakdown},
		{"enough", 500, report.DrillBreakdown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, o, d := setup(t)
			o.DrillMax = tt.max
			res, got := drill(t, o, d)
			if got.Mode != tt.mode || got.Requests > tt.max {
				t.Errorf("drill-down %+v, want mode %s within %d requests", got, tt.mode, tt.max)
			}
			ranOut := strings.Contains(notes(res), "RECON_DRILLDOWN_MAX_REQUESTS ran out")
			if ranOut != (tt.max < 500) {
				t.Errorf("budget ran out: %v, want %v\n%s", ranOut, tt.max < 500, notes(res))
			}
			if tt.max == 500 && len(res.Links) == 0 {
				t.Errorf("no link rows with the whole budget")
			}
		})
	}
}

// Without /breakdown/link the drill-down checks the store's links one by
// one and finds the same links.
func TestDrillDownFallback(t *testing.T) {
	_, o, d := setup(t)
	_, want := drill(t, o, d)
	wantRes, _ := drill(t, o, d)

	world, o, d := setup(t)
	world.Elido.SetFaults(elidotest.Fault{Kind: elidotest.NotFound, Endpoint: "breakdown/link"})
	res, got := drill(t, o, d)
	if want.Mode != report.DrillBreakdown || got.Mode != report.DrillFallback || got.UncheckedLinks != 0 {
		t.Errorf("drill-down %+v then %+v, want breakdown then a complete fallback", want, got)
	}
	if world.Elido.Requests()["timeseries"] < 2 {
		t.Errorf("requests %v: want /timeseries per link", world.Elido.Requests())
	}
	if diff := cmp.Diff(wantRes.Links, res.Links); diff != "" {
		t.Errorf("links through the fallback (-breakdown +fallback):\n%s", diff)
	}
}

// Switched off, the drill-down makes no request and still explains the
// findings across days.
func TestDrillDownOff(t *testing.T) {
	world, o, d := setup(t)
	o.Drilldown = false
	_, got := drill(t, o, d)
	before := world.Elido.Requests()
	if got.Mode != report.DrillOff || got.Requests != 0 {
		t.Errorf("drill-down %+v, want off", got)
	}
	if before["breakdown/link"] != 0 || before["breakdown/country"] != 0 {
		t.Errorf("requests %v with the drill-down off", before)
	}
}

// A count Elido changed after an earlier run recorded it is a finding of
// the report, built once with it.
func TestRunReportsARevisedCount(t *testing.T) {
	world, o, d := setup(t)
	ctx := context.Background()
	o.History = migratedHistory(t, "sqlite:"+filepath.Join(t.TempDir(), "history.db"))
	if out, err := Run(ctx, o, d); err != nil || out.Err(PartHistory) != nil {
		t.Fatalf("first run: %v, history %v", err, out.Err(PartHistory))
	}
	world.Elido.SetClicks(world.ElidoClicks[1:]) // Elido drops the first day's first click
	out, err := Run(ctx, o, d)
	if err != nil || out.Err(PartHistory) != nil {
		t.Fatalf("second run: %v, history %v", err, out.Err(PartHistory))
	}
	var revised []string
	for _, f := range out.Report.Findings {
		if f.Kind == reconcile.FindingAPIRevised {
			revised = append(revised, f.Message)
		}
	}
	if len(revised) != 1 || !strings.Contains(revised[0], "Elido's count for 2026-10-23 changed") {
		t.Errorf("revision findings %q, want one for 2026-10-23", revised)
	}
}

// The drill-down keeps a fifth of RECON_TIMEOUT, at most five minutes, for
// the report, Slack and the history.
func TestDrillDeadline(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 11, 29, 3, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		want    time.Time
	}{
		{"a_fifth_of_ten_minutes", 10 * time.Minute, end.Add(-2 * time.Minute)},
		{"at_most_five_minutes", 30 * time.Minute, end.Add(-5 * time.Minute)},
		{"a_fifth_of_two_seconds", 2 * time.Second, end.Add(-400 * time.Millisecond)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithDeadline(context.Background(), end)
			defer cancel()
			if got := drillDeadline(ctx, tt.timeout); !got.Equal(tt.want) {
				t.Errorf("drillDeadline = %s, want %s", got, tt.want)
			}
		})
	}
}

// An injected limit stops the drill-down when it says, and the result says
// what was not read.
func TestDrillDownStopsAtItsLimit(t *testing.T) {
	world, o, d := setup(t)
	world.Elido.SetFaults(elidotest.Fault{Kind: elidotest.Slow, Delay: time.Minute, Endpoint: "breakdown/link"})
	d.DrillLimit = func(ctx context.Context) (context.Context, context.CancelFunc) {
		dctx, cancel := context.WithCancel(ctx)
		arrived := world.Elido.Arrived("breakdown/link")
		go func() {
			select {
			case <-arrived:
			case <-time.After(30 * time.Second):
			}
			cancel()
		}()
		return dctx, cancel
	}
	res, _ := drill(t, o, d)
	if !strings.Contains(notes(res), "the drill-down stopped at its time limit") {
		t.Errorf("no finding says the drill-down stopped:\n%s", notes(res))
	}
	if diff := cmp.Diff(demoStatuses, statuses(res)); diff != "" {
		t.Errorf("days (-want +got):\n%s", diff)
	}
}

// stages records the progress stages a run shows.
type stages struct {
	mu   sync.Mutex
	seen []string
}

func (s *stages) Step(stage string, done, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if done > total {
		stage += fmt.Sprintf(" %d/%d", done, total)
	}
	if len(s.seen) == 0 || s.seen[len(s.seen)-1] != stage {
		s.seen = append(s.seen, stage)
	}
}

func (s *stages) Done() {}

// Elido and the store are read at the same time: while Elido is slow to
// answer, the store's totals are already read. Their progress shows as one
// stage, never more done than in all.
func TestRunReadsBothSidesAtOnce(t *testing.T) {
	world, o, d := setup(t)
	world.Elido.SetFaults(elidotest.Fault{Kind: elidotest.Slow, Endpoint: "timeseries", Delay: 2 * time.Second, Times: 1})
	var logged bytes.Buffer
	d.Log = slog.New(slog.NewTextHandler(&logged, nil))
	p := &stages{}
	d.Progress = p
	out, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(demoStatuses, statuses(out.Result)); diff != "" {
		t.Errorf("days (-want +got):\n%s", diff)
	}
	text := logged.String()
	store, elido := strings.Index(text, "msg=\"store read\""), strings.Index(text, "msg=\"elido read\"")
	if store < 0 || elido < 0 || store > elido {
		t.Errorf("the store was read after Elido answered, or not at all:\n%s", text)
	}
	if diff := cmp.Diff([]string{"elido+store", "drill-down"}, p.seen); diff != "" {
		t.Errorf("progress stages (-want +got):\n%s", diff)
	}
}

// A day drilled through /breakdown/link keeps only the links whose counts
// differ, both sides, and they give the rows both sides' whole per-link
// counts give: the report needs no more, and a day of a large workspace
// is not held whole.
func TestDrillKeepsOnlyTheLinksThatDiffer(t *testing.T) {
	_, o, d := setup(t)
	st := openStore(t, o)
	ctx := context.Background()
	api, summaries, err := readElido(ctx, elidoReadOf(o, d))
	if err != nil {
		t.Fatal(err)
	}
	local, err := readTotals(ctx, storeReadOf(o, d, st))
	if err != nil {
		t.Fatal(err)
	}
	res := reconcile.Compare(reconcile.Input{Window: o.Window, Now: now, Settle: o.Settle, API: api, Local: local, Summaries: summaries})
	dr := driller{client: d.Elido, store: st, query: o.Query, window: o.Window, now: now, max: o.DrillMax, log: d.Log, progress: d.Progress}
	details, storeErrs, _, err := dr.drill(ctx, res)
	if err != nil || len(storeErrs) > 0 {
		t.Fatalf("drill: %v, store errors %v", err, storeErrs)
	}
	if len(details) != len(res.Gaps()) {
		t.Fatalf("%d days drilled, want the %d that differ", len(details), len(res.Gaps()))
	}
	kept, known := 0, 0
	for day, det := range details {
		if !det.LinksComplete {
			t.Fatalf("%s: links not read: %v", day, det.Notes)
		}
		for _, m := range []map[string]int64{det.APILinks, det.LocalLinks} {
			for id := range m {
				if det.APILinks[id] == det.LocalLinks[id] {
					t.Errorf("%s: %s kept, though both sides count %d", day, id, det.APILinks[id])
				}
			}
		}
		whole, err := st.Counts(ctx, o.Query, day, o.Window.Loc)
		if err != nil {
			t.Fatal(err)
		}
		links, err := d.Elido.LinkBreakdown(ctx, day, day, o.Window.Loc)
		if err != nil {
			t.Fatal(err)
		}
		wholeAPI := map[string]int64{}
		for _, l := range links {
			wholeAPI[l.LinkID] = l.Clicks
		}
		want := reconcile.CompareLinks(day, wholeAPI, whole.Links, true)
		if diff := cmp.Diff(want, reconcile.CompareLinks(day, det.APILinks, det.LocalLinks, true)); diff != "" {
			t.Errorf("%s: link rows (-whole +kept):\n%s", day, diff)
		}
		kept, known = kept+len(det.LocalLinks), known+len(whole.Links)
	}
	if kept >= known {
		t.Errorf("kept %d of the store's %d links: the test needs links that match", kept, known)
	}
}

// With no request left for Elido's per-link counts, the store's per-link
// counts of the day are not read either: a workspace's day is as many rows
// as it has links, and without Elido's side they compare with nothing.
func TestDrillDownWithoutBudgetReadsNoStoreLinks(t *testing.T) {
	world, o, d := setup(t)
	var logs bytes.Buffer
	d.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.DrillMax = 0
	st := openStore(t, o)
	res := compared(t, o, d, st)
	// Any read of the store's clicks from here on fails, and says so.
	db, err := sql.Open("sqlite", strings.TrimPrefix(world.StoreDSN, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("ALTER TABLE clicks RENAME TO clicks_moved"); err != nil {
		t.Fatal(err)
	}
	res, _, err = drillDown(context.Background(), drillStageOf(o, d, st), res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notes(res), "RECON_DRILLDOWN_MAX_REQUESTS ran out") {
		t.Errorf("no note that the budget ran out:\n%s", notes(res))
	}
	if strings.Contains(logs.String(), "store per-link read failed") {
		t.Errorf("the store's per-link counts were read without a request left for Elido's:\n%s", logs.String())
	}
}
