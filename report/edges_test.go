package report

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The hour axis of a 25-hour day keeps every label whole: none runs past
// the chart's edge ("23:0").
func TestHourAxisFitsA25HourDay(t *testing.T) {
	loc, _ := time.LoadLocation("Europe/Warsaw")
	for _, tt := range []struct {
		date  string
		hours float64
		want  []string
	}{
		{"2026-10-25", 25, []string{"00:00", "05:00", "11:00", "17:00"}},
		{"2026-10-24", 24, []string{"00:00", "06:00", "12:00", "18:00"}},
		{"2026-03-29", 23, []string{"00:00", "07:00", "13:00", "19:00"}},
	} {
		t.Run(tt.date, func(t *testing.T) {
			start := time.Date(2026, 10, 25, 2, 0, 0, 0, loc).Format(time.RFC3339)
			d := Day{Date: tt.date, Hours: tt.hours, HoursWithGap: []Hour{{Start: start, API: 10, Local: 4, Delta: -6}}}
			h := newHourChart(d, loc)
			var got []string
			for _, l := range h.Labels {
				got = append(got, l.Text)
				if l.Anchor == "start" && l.X+hourLabelWidth > h.Width {
					t.Errorf("label %q at %v runs past the edge %v", l.Text, l.X, h.Width)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

// A re-check is one command per run of consecutive days (--date for one
// day), not one over the months between scattered days; past five runs,
// one command spans them all.
func TestRecheckCommands(t *testing.T) {
	year := func(gaps ...int) Report {
		r := Report{Window: Window{From: "2026-01-01", To: "2026-12-31", TZ: "UTC"}}
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range 365 {
			d := countDay(start.AddDate(0, 0, i).Format("2006-01-02"), i64(100), i64(100), "match")
			for _, g := range gaps {
				if g == i {
					d = countDay(d.Date, i64(100), i64(90), "missing")
					d.Severity = "fail"
				}
			}
			r.Days = append(r.Days, d)
		}
		return r
	}
	for _, tt := range []struct {
		name string
		r    Report
		want [][]string
	}{
		{"five_scattered_days", year(10, 60, 120, 200, 255), [][]string{
			{"clickrecon run", "--date 2026-01-11", "--tz UTC"},
			{"clickrecon run", "--date 2026-03-02", "--tz UTC"},
			{"clickrecon run", "--date 2026-05-01", "--tz UTC"},
			{"clickrecon run", "--date 2026-07-20", "--tz UTC"},
			{"clickrecon run", "--date 2026-09-13", "--tz UTC"},
		}},
		{"a_run_and_a_day", year(10, 11, 12, 300), [][]string{
			{"clickrecon run", "--from 2026-01-11", "--to 2026-01-13", "--tz UTC"},
			{"clickrecon run", "--date 2026-10-28", "--tz UTC"},
		}},
		{"six_runs_one_span", year(1, 3, 5, 7, 9, 11), [][]string{
			{"clickrecon run", "--from 2026-01-02", "--to 2026-01-12", "--tz UTC"},
		}},
		{"a_zone_a_shell_splits_is_quoted", func() Report { r := year(10); r.Window.TZ = "Mars/Olympus Mons"; return r }(), [][]string{
			{"clickrecon run", "--date 2026-01-11", "--tz 'Mars/Olympus Mons'"},
		}},
		{"no_gap_the_window", year(), [][]string{
			{"clickrecon run", "--from 2026-01-01", "--to 2026-12-31", "--tz UTC"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RecheckCommands(tt.r)); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
	// On the page a flag keeps its value on its line: a narrow screen
	// breaks the command between flags, never inside --to's date.
	page, err := HTML(year(10, 11))
	if err != nil {
		t.Fatal(err)
	}
	if want := `<pre class="cmd"><span class="nw">clickrecon run</span> <span class="nw">--from 2026-01-11</span> <span class="nw">--to 2026-01-12</span> <span class="nw">--tz UTC</span></pre>`; !strings.Contains(string(page), want) {
		t.Errorf("report.html lacks %s", want)
	}
}

// The chart names its worst gap in the colour of its side: a surplus is
// not drawn in the red of a loss.
func TestChartCalloutTakesTheGapsColour(t *testing.T) {
	surplus := countDay("2026-11-28", i64(40), i64(45), "surplus")
	surplus.Severity = "warn"
	c := newChart("chart", []Day{countDay("2026-11-27", i64(40), i64(40), "match"), surplus}, 960)
	if c.Callout == nil || c.CalloutStatus != "surplus" {
		t.Fatalf("callout %+v status %q, want the surplus", c.Callout, c.CalloutStatus)
	}
	r := Report{Window: Window{From: "2026-11-27", To: "2026-11-28", TZ: "UTC"}, Days: []Day{countDay("2026-11-27", i64(40), i64(40), "match"), surplus}}
	page, err := HTML(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `<text class="callout surplus"`) || !strings.Contains(string(page), "svg text.callout.surplus { fill: #b85c00; }") {
		t.Error("the surplus's callout is not drawn in the surplus colour")
	}
}

// When no day could be verified, the headline names the side that could
// not be read, not "nothing".
func TestHeadlineNamesTheUnreadSide(t *testing.T) {
	unread := func(api, local *int64) Report {
		d := countDay("2026-11-27", api, local, "unverifiable")
		return Report{Window: Window{From: d.Date, To: d.Date, TZ: "UTC"}, Days: []Day{d}, Coverage: Coverage{Days: 1, Unverifiable: 1}}
	}
	for _, tt := range []struct {
		name string
		r    Report
		want string
	}{
		{"store_unread", unread(i64(40), nil), "The store could not be read (Elido was): none of the 1 day was verified."},
		{"elido_unread", unread(nil, i64(40)), "Elido could not be read (the store was): none of the 1 day was verified."},
		{"both_unread", unread(nil, nil), "Neither Elido nor the store could be read: none of the 1 day was verified."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := headline(tt.r, nil); got.Before != tt.want {
				t.Errorf("headline %q, want %q", got.Before, tt.want)
			}
		})
	}
}

// At 400 px a table stays a table, compact, with its optional columns
// left out: a year of days is not 365 four-line cards.
func TestNarrowTablesStayTables(t *testing.T) {
	page, err := HTML(Report{Window: Window{From: "2026-11-27", To: "2026-11-27", TZ: "UTC"}, Days: []Day{countDay("2026-11-27", i64(40), i64(40), "match")}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	if strings.Contains(s, "tr { display: block") || !strings.Contains(s, "th.opt, td.opt { display: none; }") || !strings.Contains(s, `<th class="n opt">hours</th>`) {
		t.Error("the narrow layout does not keep the tables as tables with optional columns")
	}
}
