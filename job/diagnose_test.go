package job

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	clickrecon "github.com/clickrecon/clickrecon"
	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// shapedWeek is five days in Europe/Warsaw around the autumn DST change,
// each losing clicks its own way: an outage in the repeated 02:00 hour of
// the 25-hour day, a steady leak, a clean day, a poller that does not
// follow next_cursor (40 clicks a page, on a day of 5,000 clicks), and a
// handler that records a retried delivery twice; the other days hold about
// 2,100 clicks.
type shapedWeek struct {
	loc           *time.Location
	window        reconcile.Window
	elido, stored []elidotest.Click
	outageFrom    time.Time
	outageTo      time.Time
	outageLost    int64
	// outageFirst and outageLast are the first and last click lost.
	outageFirst, outageLast time.Time
	// reach is how far back the fake's clicks/recent serves clicks; zero:
	// all of them.
	reach time.Time
}

func newShapedWeek(t *testing.T, clean bool) shapedWeek {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Warsaw")
	if err != nil {
		t.Fatal(err)
	}
	from, _ := reconcile.ParseDate("2026-10-24")
	w := shapedWeek{loc: loc, window: reconcile.Window{From: from, To: from.AddDays(4), Loc: loc}}
	rng := rand.New(rand.NewPCG(29, 1))
	for i, day := range w.window.Days() {
		start, end := day.Bounds(loc)
		base, peak := 40.0, 210.0
		if i == 4 { // the poller's day is busier
			base, peak = 100, 500
		}
		var clicks []elidotest.Click
		for h := start; h.Before(end); h = h.Add(time.Hour) {
			wall := h.In(loc).Hour()
			n := int(math.Round(base + peak*math.Exp(-math.Pow(float64(wall-15)/3, 2))))
			for range n {
				ts := h.Add(time.Duration(rng.Int64N(int64(time.Hour/time.Millisecond))) * time.Millisecond).UTC()
				clicks = append(clicks, elidotest.Click{TS: ts, LinkID: fmt.Sprintf("lnk_%d", rng.IntN(8)), CountryCode: []string{"PL", "DE", ""}[rng.IntN(3)]})
			}
		}
		slices.SortFunc(clicks, func(a, b elidotest.Click) int { return a.TS.Compare(b.TS) })
		w.elido = append(w.elido, clicks...)
		kept := slices.Clone(clicks)
		switch {
		case clean:
		case i == 1: // 2026-10-25: the receiver was down in the second 02:00 (CET)
			w.outageFrom = time.Date(2026, 10, 25, 1, 7, 13, 0, time.UTC)
			w.outageTo = time.Date(2026, 10, 25, 1, 31, 40, 0, time.UTC)
			kept = slices.DeleteFunc(kept, func(c elidotest.Click) bool {
				lost := !c.TS.Before(w.outageFrom) && c.TS.Before(w.outageTo)
				if lost {
					w.outageLost++
					if w.outageFirst.IsZero() {
						w.outageFirst = c.TS
					}
					w.outageLast = c.TS
				}
				return lost
			})
		case i == 2: // about 1 in 20 lost
			kept = slices.DeleteFunc(kept, func(elidotest.Click) bool { return rng.IntN(20) == 0 })
		case i == 3: // clean
		case i == 4: // each 5-minute window keeps its newest 40 clicks
			byBin := map[int64]int{}
			for j := len(kept) - 1; j >= 0; j-- {
				b := kept[j].TS.Unix() / 300
				byBin[b]++
				if byBin[b] > 40 {
					kept[j].LinkID = "" // marked lost
				}
			}
			kept = slices.DeleteFunc(kept, func(c elidotest.Click) bool { return c.LinkID == "" })
		}
		if !clean && i == 0 { // 2026-10-24: 15 rows of 10:00-10:30 recorded twice
			var dup []elidotest.Click
			for _, c := range kept {
				if c.TS.In(loc).Hour() == 10 && c.TS.In(loc).Minute() < 30 && len(dup) < 15 {
					dup = append(dup, c)
				}
			}
			kept = append(kept, dup...)
		}
		w.stored = append(w.stored, kept...)
	}
	return w
}

// run runs the pipeline over the week against the fake Elido and the
// store at rawDSN (its events schema already made, rows inserted),
// and returns the report and the fake's requests.
func (w shapedWeek) run(t *testing.T, storeDSN string, mode DiagnoseMode, repairMode RepairMode, maxRequests int) (report.Report, map[string]int) {
	t.Helper()
	srv := elidotest.NewServer("48213", "key", w.elido)
	t.Cleanup(srv.Close)
	if !w.reach.IsZero() {
		srv.SetReach(w.reach)
	}
	client, query := testClient(t, srv.URL(), "key", "48213")
	o := Options{Window: w.window, WorkspaceID: "48213", RunKey: "test", Query: query,
		Store: dbtest.Parsed(t, store.ParseDSN, storeDSN), Settle: 2 * time.Hour, Timeout: time.Minute,
		Drilldown: true, DrillMax: maxRequests, Diagnose: mode, Repair: repairMode,
		ReportDir: filepath.Join(t.TempDir(), "reports")}
	d := Deps{Elido: client, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now: func() time.Time { return time.Date(2026, 10, 29, 3, 0, 0, 0, time.UTC) }, Progress: noProgress{}}
	out, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	return out.Report, srv.Requests()
}

// testClient is a client of the fake Elido at baseURL that never waits,
// and the events preset.
func testClient(t *testing.T, baseURL, key, workspace string) (*elido.Client, store.Query) {
	t.Helper()
	client, err := elido.New(elido.Config{BaseURL: baseURL, APIKey: key, WorkspaceID: workspace, RatePerMinute: 60000},
		elido.WithClock(time.Now, func(ctx context.Context, _ time.Duration) error { return ctx.Err() }))
	if err != nil {
		t.Fatal(err)
	}
	query, err := store.PresetQuery("events")
	if err != nil {
		t.Fatal(err)
	}
	return client, query
}

// sqliteStore writes clicks into a new SQLite store of the events schema
// and returns its DSN.
func sqliteStore(t *testing.T, clicks []elidotest.Click) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clicks.db")
	schema, err := clickrecon.SQL.ReadFile("sql/store/sqlite/events.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlx.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	tx := db.MustBegin()
	for _, c := range clicks {
		tx.MustExec(`INSERT INTO clicks (ts, link_id, country_code) VALUES (?, ?, ?)`, c.TS.UTC().Format("2006-01-02T15:04:05.000Z"), c.LinkID, c.CountryCode)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return "sqlite:" + path
}

// postgresStore is sqliteStore on PostgreSQL (internal/pgtest).
func postgresStore(t *testing.T, clicks []elidotest.Click) string {
	t.Helper()
	db, raw := pgtest.New(t)
	schema, err := clickrecon.SQL.ReadFile("sql/store/postgres/events.sql")
	if err != nil {
		t.Fatal(err)
	}
	db.MustExec(string(schema))
	ts := make([]string, len(clicks))
	links := make([]string, len(clicks))
	countries := make([]string, len(clicks))
	for i, c := range clicks {
		ts[i], links[i], countries[i] = c.TS.UTC().Format(time.RFC3339Nano), c.LinkID, c.CountryCode
	}
	db.MustExec(`INSERT INTO clicks (ts, link_id, country_code)
SELECT ts, link, nullif(country, '') FROM unnest($1::timestamptz[], $2::text[], $3::text[]) AS c (ts, link, country)`,
		pq.Array(ts), pq.Array(links), pq.Array(countries))
	return raw
}

func diagnosesOf(rep report.Report, date string) []report.Diagnosis {
	return report.DayDiagnoses(rep, date)
}

func kindsOf(ds []report.Diagnosis) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Kind)
	}
	return out
}

// Each shape of the week is named, with its window and share, through the
// whole run against the fake Elido and a real store; the clean day gets
// none.
func TestRunDiagnosesEachShape(t *testing.T) {
	w := newShapedWeek(t, false)
	for _, tt := range []struct {
		name  string
		store func(*testing.T, []elidotest.Click) string
	}{{"sqlite", sqliteStore}, {"postgres", postgresStore}} {
		t.Run(tt.name, func(t *testing.T) {
			rep, _ := w.run(t, tt.store(t, w.stored), DiagnoseRaw, RepairOff, 500)
			want := map[string][]string{
				"2026-10-24": {reconcile.DiagDuplicates},
				"2026-10-25": {reconcile.DiagOutage},
				"2026-10-26": {reconcile.DiagSteadyLeak},
				"2026-10-27": nil,
				"2026-10-28": {reconcile.DiagBusy},
			}
			for date, kinds := range want {
				got := diagnosesOf(rep, date)
				if !slices.Equal(kindsOf(got), kinds) {
					t.Errorf("%s: kinds %v, want %v: %+v", date, kindsOf(got), kinds, got)
					continue
				}
				for _, d := range got {
					if d.Share < 0.95 || d.Evidence != reconcile.EvidenceRaw {
						t.Errorf("%s: %s explains %.3f of the gap from %v, want nearly all from raw clicks", date, d.Kind, d.Share, d.Evidence)
					}
				}
			}
			o := diagnosesOf(rep, "2026-10-25")[0]
			from, _ := time.Parse(time.RFC3339, o.From)
			to, _ := time.Parse(time.RFC3339, o.To)
			if !from.Equal(w.outageFirst.Truncate(time.Second)) || !to.Equal(w.outageLast.Truncate(time.Second)) {
				t.Errorf("outage %s..%s, want the first and last click the receiver lost, %s..%s", o.From, o.To, w.outageFirst, w.outageLast)
			}
			if o.Clicks != w.outageLost || !strings.Contains(o.From, "+01:00") || !strings.Contains(o.Message, "CET") {
				t.Errorf("outage %+v: want %d clicks in the second 02:00 (CET, +01:00)", o, w.outageLost)
			}
			if d := diagnosesOf(rep, "2026-10-24")[0]; d.Clicks != 15 {
				t.Errorf("duplicates %+v, want 15", d)
			}
			if b := diagnosesOf(rep, "2026-10-28")[0]; b.IntervalS != 300 || b.Threshold == nil || *b.Threshold > 40 {
				t.Errorf("busy intervals %+v, want 5-minute intervals above at most 40", b)
			}
			if len(rep.Timelines) != 4 {
				t.Errorf("%d timelines, want one per diagnosed day", len(rep.Timelines))
			}
		})
	}
}

// From the hourly counts alone (RECON_DIAGNOSE=hourly) the run makes no
// clicks/recent request, and still names the outage to the hour, the leak
// and the busy hours; the duplicates are named from the store's rows of
// the hour with a surplus, which cost no Elido request.
func TestRunDiagnosesFromHourlyCounts(t *testing.T) {
	w := newShapedWeek(t, false)
	rep, requests := w.run(t, sqliteStore(t, w.stored), DiagnoseHourly, RepairOff, 500)
	if n := requests["clicks/recent"]; n != 0 {
		t.Errorf("%d clicks/recent requests from hourly counts", n)
	}
	_, off := w.run(t, sqliteStore(t, w.stored), DiagnoseOff, RepairOff, 500)
	if fmt.Sprint(requests) != fmt.Sprint(off) {
		t.Errorf("requests with hourly diagnoses %v, without %v", requests, off)
	}
	seen := map[elidotest.Click]int{}
	dupLinks := map[string]bool{}
	for _, c := range w.stored {
		if seen[c]++; seen[c] > 1 {
			dupLinks[c.LinkID] = true
		}
	}
	d := diagnosesOf(rep, "2026-10-24")
	if len(d) != 1 || d[0].Kind != reconcile.DiagDuplicates || d[0].Clicks != 15 || d[0].Share != 1 ||
		d[0].Evidence != reconcile.EvidenceRows ||
		d[0].Links == nil || *d[0].Links != len(dupLinks) || d[0].From != "2026-10-24T10:00:00+02:00" || d[0].To != "2026-10-24T11:00:00+02:00" {
		t.Errorf("2026-10-24: %+v, want 15 duplicates on %d links in 10:00-11:00 CEST from hourly counts and store rows", d, len(dupLinks))
	}
	for date, kinds := range map[string][]string{
		"2026-10-25": {reconcile.DiagOutage},
		"2026-10-26": {reconcile.DiagSteadyLeak},
		"2026-10-28": {reconcile.DiagBusy},
	} {
		if got := diagnosesOf(rep, date); !slices.Equal(kindsOf(got), kinds) {
			t.Errorf("%s: kinds %v, want %v: %+v", date, kindsOf(got), kinds, got)
		}
	}
	if o := diagnosesOf(rep, "2026-10-25"); len(o) == 1 && (o[0].From != "2026-10-25T02:00:00+01:00" || o[0].To != "2026-10-25T03:00:00+01:00") {
		t.Errorf("hourly outage %s..%s, want the second 02:00 hour", o[0].From, o[0].To)
	}
}

// A clean night makes no request beyond the run's own; the raw clicks are
// read only for the hours that differ; and a repair in the same run reads
// no hour's first page again.
func TestDiagnosisCost(t *testing.T) {
	clean := newShapedWeek(t, true)
	cleanDSN := sqliteStore(t, clean.stored)
	_, on := clean.run(t, cleanDSN, DiagnoseRaw, RepairOff, 500)
	_, off := clean.run(t, cleanDSN, DiagnoseOff, RepairOff, 500)
	if fmt.Sprint(on) != fmt.Sprint(off) {
		t.Errorf("a clean night's requests with diagnoses %v, without %v", on, off)
	}

	w := newShapedWeek(t, false)
	dsn := sqliteStore(t, w.stored)
	rep, on := w.run(t, dsn, DiagnoseRaw, RepairOff, 500)
	_, off = w.run(t, dsn, DiagnoseOff, RepairOff, 500)
	hours := 0
	for _, d := range rep.Days {
		if d.IsGap() {
			hours += len(d.HoursWithGap)
		}
	}
	if on["clicks/recent"] != hours || off["clicks/recent"] != 0 {
		t.Errorf("clicks/recent: %d requests with diagnoses for %d hours that differ (one page each), %d without", on["clicks/recent"], hours, off["clicks/recent"])
	}
	_, withRepair := w.run(t, dsn, DiagnoseRaw, RepairPrint, 500)
	_, repairOnly := w.run(t, dsn, DiagnoseOff, RepairPrint, 500)
	// The repair reads only missing days: the diagnosis also read the
	// surplus day's hour.
	surplusHours := 0
	for _, d := range rep.Days {
		if d.Status == reconcile.Surplus {
			surplusHours += len(d.HoursWithGap)
		}
	}
	if withRepair["clicks/recent"] != repairOnly["clicks/recent"]+surplusHours {
		t.Errorf("clicks/recent with diagnoses and repair %d, repair alone %d (+%d hours of surplus days): the repair read again what the diagnosis read",
			withRepair["clicks/recent"], repairOnly["clicks/recent"], surplusHours)
	}

	// A budget too small for the worst day's hours leaves it to its hourly
	// counts, and says so.
	rep, small := w.run(t, dsn, DiagnoseRaw, RepairOff, 15)
	if left := 15 - rep.Drilldown.Requests; small["clicks/recent"] > left {
		t.Errorf("%d clicks/recent requests, %d left by the drill-down", small["clicks/recent"], left)
	}
	said := false
	for _, f := range rep.Findings {
		said = said || f.Kind == report.FindingDiagnosis && strings.Contains(f.Message, "RECON_DRILLDOWN_MAX_REQUESTS")
	}
	if !said {
		t.Errorf("no finding says the raw clicks were not read: %+v", rep.Findings)
	}
}

// Hours beyond clicks/recent's reach are diagnosed from their hourly
// counts, and so is every older hour: no request is made for them once one
// came short, and a finding says why.
func TestDiagnosisBeyondReach(t *testing.T) {
	w := newShapedWeek(t, false)
	w.reach = time.Date(2026, 10, 27, 0, 0, 0, 0, time.UTC) // only 2026-10-28 is within reach
	rep, requests := w.run(t, sqliteStore(t, w.stored), DiagnoseRaw, RepairOff, 500)
	if d := diagnosesOf(rep, "2026-10-28"); len(d) != 1 || d[0].Evidence != reconcile.EvidenceRaw {
		t.Errorf("the day within reach: %+v, want raw clicks", d)
	}
	if d := diagnosesOf(rep, "2026-10-25"); len(d) != 1 || d[0].Kind != reconcile.DiagOutage || d[0].Evidence == reconcile.EvidenceRaw {
		t.Errorf("the day beyond reach: %+v, want an outage from hourly counts", d)
	}
	said := 0
	for _, f := range rep.Findings {
		if f.Kind == report.FindingDiagnosis && strings.Contains(f.Message, "does not reach this far back") {
			said++
		}
	}
	if said != 3 {
		t.Errorf("%d findings say clicks/recent does not reach, want one per older gap day: %+v", said, rep.Findings)
	}
	busyHours := len(rep.Days[4].HoursWithGap)
	if n := requests["clicks/recent"]; n != busyHours+1 {
		t.Errorf("%d clicks/recent requests, want the %d hours within reach and the one that came short", n, busyHours)
	}
}

// A store that cannot list its rows (a query other than the events
// preset) leaves a surplus to the hourly counts: nothing is read, the
// day's note says why, and no later day tries again.
func TestSurplusRowsNotListed(t *testing.T) {
	w := newShapedWeek(t, false)
	st, err := store.Open(t.Context(), dbtest.Parsed(t, store.ParseDSN, sqliteStore(t, w.stored)), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	day := w.window.From
	start := day.Start(w.loc)
	var hours []reconcile.HourPair
	for i := range 24 {
		hours = append(hours, reconcile.HourPair{Start: start.Add(time.Duration(i) * time.Hour), API: 100, Local: 100})
	}
	hours[10].Local = 110
	for _, tt := range []struct {
		preset string
		listed bool
	}{{"events", true}, {"daily", false}} {
		q, err := store.PresetQuery(tt.preset)
		if err != nil {
			t.Fatal(err)
		}
		dg := diagnoser{store: st, query: q, window: w.window, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		rows, note, listed := dg.surplusRows(t.Context(), day, hours)
		if listed != tt.listed || (len(rows) == 1) != tt.listed || (note == "") != tt.listed ||
			(!tt.listed && !strings.Contains(note, "store rows not read: the store's rows cannot be listed")) {
			t.Errorf("%s: %d hours read, note %q, listed %v; want listed %v", tt.preset, len(rows), note, listed, tt.listed)
		}
		if tt.listed && !rows[0].From.Equal(hours[10].Start) {
			t.Errorf("%s: read %s, want the surplus hour %s", tt.preset, rows[0].From, hours[10].Start)
		}
	}
}
