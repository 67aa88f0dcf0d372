package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// manyLinks is Elido's view of 2026-11-25 in Warsaw: n links with one to
// three clicks each, a link the store never saw, and a link that got
// clicks last week and lost all of today's.
func manyLinks(n int) []elidotest.Click {
	noon := utc("2026-11-25T11:00:00Z")
	var c []elidotest.Click
	for i := 0; i < n; i++ {
		for k := 0; k <= i%3; k++ {
			c = append(c, elidotest.Click{TS: noon.Add(time.Duration(i*3+k) * time.Second), LinkID: fmt.Sprintf("lnk_%04d", i), CountryCode: "DE"})
		}
	}
	c = append(c, clicksAt("lnk_elido_only", "2026-11-25T08:00:00Z", "2026-11-25T08:00:01Z", "2026-11-25T08:00:02Z", "2026-11-25T08:00:03Z")...)
	c = append(c, clicksAt("lnk_last_week", "2026-11-20T10:00:00Z", "2026-11-25T09:00:00Z", "2026-11-25T09:30:00Z")...)
	return c
}

// manyLinksStore is the store's view: lnk_0007 lost both its clicks,
// lnk_1999 (or the last link) lost one, lnk_elido_only and today's clicks
// of lnk_last_week were never recorded, and a link Elido does not know
// was recorded.
func manyLinksStore(api []elidotest.Click, n int) []elidotest.Click {
	lastLink := fmt.Sprintf("lnk_%04d", n-1)
	var out []elidotest.Click
	lostLast := false
	for _, c := range api {
		switch {
		case c.LinkID == "lnk_0007", c.LinkID == "lnk_elido_only":
			continue
		case c.LinkID == "lnk_last_week" && c.TS.After(utc("2026-11-21T00:00:00Z")):
			continue
		case c.LinkID == lastLink && !lostLast:
			lostLast = true
			continue
		}
		out = append(out, c)
	}
	return append(out, clicksAt("lnk_store_only", "2026-11-25T12:00:00Z", "2026-11-25T12:00:01Z", "2026-11-25T12:00:02Z")...)
}

func linkRows(links []report.Link) []string {
	var out []string
	for _, l := range links {
		out = append(out, fmt.Sprintf("%s %s %d/%d %+d %s", l.Date, l.LinkID, l.API, l.Local, l.Delta, l.Status))
	}
	return out
}

func findingKinds(fs []report.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind)
	}
	return out
}

func findingText(fs []report.Finding, kind string) string {
	var b strings.Builder
	for _, f := range fs {
		if f.Kind == kind {
			b.WriteString(f.Message + "\n")
		}
	}
	return b.String()
}

// Through /breakdown/link over several pages, the report names exactly
// the links that differ, one-sided links included.
func TestDrilldownAcrossPages(t *testing.T) {
	const n = 2500 // three pages of 1000
	api := manyLinks(n)
	f := newFixture(t, "postgres", api, manyLinksStore(api, n))
	r := f.run("--date", "2026-11-25")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := f.readReport()
	want := []string{
		"2026-11-25 lnk_elido_only 4/0 -4 missing",
		"2026-11-25 lnk_store_only 0/3 +3 surplus",
		"2026-11-25 lnk_0007 2/0 -2 missing",
		"2026-11-25 lnk_last_week 2/0 -2 missing",
		"2026-11-25 lnk_2499 1/0 -1 missing",
	}
	if diff := cmp.Diff(want, linkRows(got.Links)); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if got.Days[0].Delta == nil || *got.Days[0].Delta != -6 {
		t.Errorf("day delta %v, want -6", got.Days[0].Delta)
	}
	if got.Requests["breakdown/link"] != 3 || got.Drilldown.Mode != "breakdown" {
		t.Errorf("requests %v, drill-down %+v: want three pages of /breakdown/link", got.Requests, got.Drilldown)
	}
	if strings.Contains(strings.Join(findingKinds(got.Findings), " "), "unexplained") {
		t.Errorf("per-link rows should add up to the day's delta: %v", got.Findings)
	}
}

// Where /breakdown/link answers 404 the job checks the links the store
// knows one by one: the same rows, but a link the store never saw can only
// be reported as an unexplained remainder.
func TestDrilldownFallback(t *testing.T) {
	const n = 120
	api := manyLinks(n)
	f := newFixture(t, "sqlite", api, manyLinksStore(api, n))
	f.elido.SetFaults(elidotest.Fault{Kind: elidotest.NotFound, Endpoint: "breakdown/link"})
	r := f.run("--date", "2026-11-25")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := f.readReport()
	// lnk_0007 lost every click and the store never saw it, nor
	// lnk_elido_only: the fallback cannot know them, and their 6 clicks
	// are the day's unexplained remainder. lnk_last_week is found through
	// the week before the window.
	want := []string{
		"2026-11-25 lnk_store_only 0/3 +3 surplus",
		"2026-11-25 lnk_last_week 2/0 -2 missing",
		"2026-11-25 lnk_0119 3/2 -1 missing",
	}
	if diff := cmp.Diff(want, linkRows(got.Links)); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if got.Drilldown.Mode != "fallback" || got.Drilldown.UncheckedLinks != 0 {
		t.Errorf("drill-down %+v, want fallback with every link checked", got.Drilldown)
	}
	if text := findingText(got.Findings, "unexplained_remainder"); !strings.Contains(text, "-6 of the day's -6") {
		t.Errorf("remainder finding %q, want -6 of -6 unexplained", text)
	}
	// One request per link the store knows (the window and the week before
	// it: lnk_0000..lnk_0119 less lnk_0007, lnk_last_week, lnk_store_only),
	// plus the day's series and its hours.
	if wantTS := 1 + 1 + (n - 1 + 2); got.Requests["timeseries"] != wantTS {
		t.Errorf("timeseries requests %d, want %d", got.Requests["timeseries"], wantTS)
	}
}

// When RECON_DRILLDOWN_MAX_REQUESTS runs out the report says how many
// links were left unchecked, and does not imply they match.
func TestDrilldownBudgetRunsOut(t *testing.T) {
	const n = 60
	api := manyLinks(n)
	f := newFixture(t, "sqlite", api, manyLinksStore(api, n))
	f.elido.SetFaults(elidotest.Fault{Kind: elidotest.NotFound, Endpoint: "breakdown/link"})
	f.env["RECON_DRILLDOWN_MAX_REQUESTS"] = "10"
	r := f.run("--date", "2026-11-25")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := f.readReport()
	// 3 requests for the day (the 404, countries, hours) leave 7 links.
	known := n - 1 + 2
	if got.Drilldown.UncheckedLinks != known-7 || got.Drilldown.Requests != 10 {
		t.Errorf("drill-down %+v, want %d unchecked after 10 requests", got.Drilldown, known-7)
	}
	text := findingText(got.Findings, "links_unchecked")
	if !strings.Contains(text, fmt.Sprintf("%d links were not checked", known-7)) || !strings.Contains(text, "not implied to match") {
		t.Errorf("budget finding %q", text)
	}
	total := 0
	for _, v := range got.Requests {
		total += v
	}
	if total != 2+10 {
		t.Errorf("%d requests in all (%v), want 2 + the budget of 10", total, got.Requests)
	}
}

// A window where every day matches makes no drill-down request; with
// --drilldown off, neither does one with gaps.
func TestDrilldownCostsNothingWhenNotNeeded(t *testing.T) {
	api := dstWindowClicks()
	for _, tt := range []struct {
		name      string
		local     []elidotest.Click
		args      []string
		wantMode  string
		wantLinks int
	}{
		{"clean_window", api, nil, "none_needed", 0},
		{"drilldown_off", lossAndDuplicate(api), []string{"--drilldown", "off"}, "off", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "sqlite", api, tt.local)
			r := f.run(append([]string{"--from", "2026-10-24", "--to", "2026-10-26"}, tt.args...)...)
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			got := f.readReport()
			if diff := cmp.Diff(map[string]int{"summary": 1, "timeseries": 1}, f.elido.Requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if got.Drilldown.Mode != tt.wantMode || len(got.Links) != tt.wantLinks {
				t.Errorf("drill-down %+v with %d links, want mode %s", got.Drilldown, len(got.Links), tt.wantMode)
			}
		})
	}
}

// A store whose daily counters are UTC days, reconciled in New York: a
// deficit on one day and a surplus on the next are reported as a day
// boundary shift with its offset, not as lost data.
func TestDrilldownFindsBoundaryShift(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	// Each day its own level; an evening burst on the 24th.
	levels := map[string]int{"2026-11-23": 8, "2026-11-24": 12, "2026-11-25": 9, "2026-11-26": 11}
	var api []elidotest.Click
	for day, level := range levels {
		start, _ := time.ParseInLocation("2006-01-02", day, ny)
		for h := 0; h < 24; h++ {
			clicks := level
			if day == "2026-11-24" && h >= 20 {
				clicks += 15
			}
			for k := 0; k < clicks; k++ {
				api = append(api, elidotest.Click{TS: start.Add(time.Duration(h)*time.Hour + time.Duration(k)*time.Minute).UTC(), LinkID: "lnk_a", CountryCode: "US"})
			}
		}
	}
	// The store's counters: clicks per UTC day.
	daily := map[string]int64{}
	for _, c := range api {
		daily[c.TS.UTC().Format("2006-01-02")]++
	}
	f := newFixture(t, "sqlite", api, nil)
	f.env["STORE_DSN"] = buildDailyStore(t, "postgres", daily)
	f.env["STORE_PRESET"] = "daily"
	f.env["RECON_TZ"] = "America/New_York"
	r := f.run("--from", "2026-11-24", "--to", "2026-11-25")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := f.readReport()
	var statuses []string
	for _, d := range got.Days {
		statuses = append(statuses, fmt.Sprintf("%s %s %+d", d.Date, d.Status, *d.Delta))
	}
	if diff := cmp.Diff([]string{"2026-11-24 missing -80", "2026-11-25 surplus +75"}, statuses); diff != "" {
		t.Errorf("days (-want +got):\n%s", diff)
	}
	text := findingText(got.Findings, "day_boundary_shift")
	for _, want := range []string{"wrong side of midnight", "likely run 5h early", "America/New_York"} {
		if !strings.Contains(text, want) {
			t.Errorf("boundary finding %q lacks %q", text, want)
		}
	}
}

// Without the drill-down the findings across days are still made.
func TestBoundaryShiftWithoutDrilldown(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	var api []elidotest.Click
	start, _ := time.ParseInLocation("2006-01-02", "2026-11-24", ny)
	for k := 0; k < 60; k++ { // the evening of the 24th, in New York
		api = append(api, elidotest.Click{TS: start.Add(21*time.Hour + time.Duration(k)*time.Minute).UTC(), LinkID: "lnk_a"})
	}
	daily := map[string]int64{}
	for _, c := range api {
		daily[c.TS.UTC().Format("2006-01-02")]++ // UTC days: all on the 25th
	}
	f := newFixture(t, "sqlite", api, nil)
	f.env["STORE_DSN"] = buildDailyStore(t, "sqlite", daily)
	f.env["STORE_PRESET"] = "daily"
	f.env["RECON_TZ"] = "America/New_York"
	if r := f.run("--from", "2026-11-24", "--to", "2026-11-25", "--drilldown", "off"); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := f.readReport()
	if text := findingText(got.Findings, "day_boundary_shift"); !strings.Contains(text, "-60") || !strings.Contains(text, "+60") {
		t.Errorf("boundary finding %q; findings %+v", text, got.Findings)
	}
	if got.Drilldown.Mode != "off" || len(got.Links) != 0 {
		t.Errorf("drill-down %+v with %d links: want none", got.Drilldown, len(got.Links))
	}
}

// buildDailyStore makes a daily-preset store holding the given counters
// for one link.
func buildDailyStore(t *testing.T, backend string, daily map[string]int64) string {
	t.Helper()
	db, dsn := newStoreDB(t, backend, "daily")
	for day, n := range daily {
		if _, err := db.Exec(db.Rebind(`INSERT INTO click_counts (day, link_id, clicks) VALUES (?, 'lnk_a', ?)`), day, n); err != nil {
			t.Fatal(err)
		}
	}
	return dsn
}
