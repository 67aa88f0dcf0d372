package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/internal/fixture"
)

// renderWithin renders report.html in a goroutine and fails the test if it
// takes longer than d: a chart that loops must fail the test, not hang it.
func renderWithin(t *testing.T, r Report, d time.Duration) []byte {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := HTML(r)
		done <- result{b, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatal(res.err)
		}
		return res.b
	case <-time.After(d):
		t.Fatalf("report.html was not rendered within %s", d)
	}
	return nil
}

func chartReport(days ...Day) Report {
	r := Report{SchemaVersion: SchemaVersion, RunKey: "k", WorkspaceID: "w", Window: Window{From: "2026-01-01", To: "2026-01-01", TZ: "UTC"},
		Status: StatusOK, Days: days}
	if len(days) > 0 {
		r.Window.From, r.Window.To = days[0].Date, days[len(days)-1].Date
	}
	return r
}

func countDay(date string, api, local *int64, status reconcile.Status) Day {
	d := Day{Date: date, Hours: 24, API: api, Local: local, Status: status, Severity: "ok", Settled: true}
	if api != nil && local != nil {
		delta := *local - *api
		d.Delta = &delta
	}
	return d
}

func i64(n int64) *int64 { return &n }

// The chart of report.html is drawn in bounded time and stays well-formed
// whatever the counts: int64's extremes, negative, zero, unknown, one day
// or four hundred.
func TestHTMLChartIsBoundedForAnyCounts(t *testing.T) {
	many := func(n int, api, local int64) []Day {
		var ds []Day
		start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range n {
			ds = append(ds, countDay(start.AddDate(0, 0, i).Format("2006-01-02"), i64(api+int64(i)), i64(local), "match"))
		}
		return ds
	}
	tests := []struct {
		name string
		days []Day
	}{
		{"no_day", nil},
		{"int64_max_one_day", []Day{countDay("2026-01-01", i64(math.MaxInt64), i64(0), "unverifiable")}},
		{"int64_max_both_sides", []Day{countDay("2026-01-01", i64(math.MaxInt64), i64(math.MaxInt64), "unverifiable")}},
		{"int64_min", []Day{countDay("2026-01-01", i64(math.MinInt64), i64(math.MinInt64), "unverifiable")}},
		{"int64_min_and_max", []Day{countDay("2026-01-01", i64(math.MinInt64), nil, "unverifiable"), countDay("2026-01-02", nil, i64(math.MaxInt64), "unverifiable")}},
		{"negative", []Day{countDay("2026-01-01", i64(-5), i64(-500), "unverifiable")}},
		{"zero", []Day{countDay("2026-01-01", i64(0), i64(0), "match")}},
		{"unknown", []Day{countDay("2026-01-01", nil, nil, "unverifiable")}},
		{"just_over_every_power_of_ten", func() []Day {
			var ds []Day
			for p := int64(1); p <= math.MaxInt64/10; p *= 10 {
				ds = append(ds, countDay(fmt.Sprintf("2026-01-%02d", len(ds)+1), i64(p*10+1), i64(p*8), "missing"))
			}
			return ds
		}()},
		{"near_max_400_days", many(400, math.MaxInt64-400, math.MaxInt64/3)},
		{"400_days", many(400, 1000, 990)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := renderWithin(t, chartReport(tt.days...), 10*time.Second)
			fixture.CheckWellFormed(t, page)
			if got := strings.Count(string(page), `<g class="day"`); got != len(tt.days) {
				t.Errorf("%d day groups, want %d", got, len(tt.days))
			}
		})
	}
}

// The scale's top is a round number at or above the largest count, for
// every count, without overflowing.
func TestNiceCeil(t *testing.T) {
	tests := []struct {
		n, want int64
	}{
		{math.MinInt64, 10},
		{-1, 10},
		{0, 10},
		{10, 10},
		{11, 12},
		{1710, 2000},
		{12345, 15000},
		{99, 100},
		{100, 100},
		{101, 120},
		{8_000_000_000_000_000_000, 8_000_000_000_000_000_000},
		{8_000_000_000_000_000_001, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(strconv.FormatInt(tt.n, 10), func(t *testing.T) {
			done := make(chan int64, 1)
			go func() { done <- niceCeil(tt.n) }()
			select {
			case got := <-done:
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("niceCeil(%d) (-want +got):\n%s", tt.n, diff)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("niceCeil(%d) did not return within 10s", tt.n)
			}
		})
	}
}

// A delta of math.MinInt64 (whose magnitude does not fit an int64) still
// sorts as the largest.
func TestWorstLinksWithExtremeDeltas(t *testing.T) {
	links := []Link{{LinkID: "small", Delta: -5}, {LinkID: "min", Delta: math.MinInt64}, {LinkID: "big", Delta: 100}}
	var got []string
	for _, l := range worstLinks(links, 3) {
		got = append(got, l.LinkID)
	}
	if diff := cmp.Diff([]string{"min", "big", "small"}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// An unverifiable day's misread delta does not set the chart's scale, so
// the other days stay readable; it is drawn as a band, not a bar. The
// scale is signed: losses below the zero line, gains above it.
func TestChartScalesOnDaysRead(t *testing.T) {
	c := newChart("chart", []Day{
		countDay("2026-11-26", i64(40), i64(0), "missing"),
		countDay("2026-11-27", i64(math.MaxInt64), i64(-7), "unverifiable"),
		countDay("2026-11-28", i64(40), i64(45), "surplus"),
	}, 960)
	var ticks []string
	for _, tk := range c.Ticks {
		ticks = append(ticks, tk.Value)
	}
	if diff := cmp.Diff([]string{"0", "+10", "−40", "−20"}, ticks); diff != "" {
		t.Errorf("ticks (-want +got):\n%s", diff)
	}
	if d := c.Days[1]; !d.Band || d.Y != c.Top {
		t.Errorf("the unverifiable day is drawn as %+v, want a band from the top", d)
	}
	if d := c.Days[0]; d.Y != c.ZeroY || d.Y+d.H != c.PlotBottom {
		t.Errorf("the loss bar spans %v..%v, want the zero line %v to the bottom %v", d.Y, d.Y+d.H, c.ZeroY, c.PlotBottom)
	}
	if c.Callout == nil || c.Callout.Text != "2026-11-26 -40" {
		t.Errorf("callout %+v, want the worst gap named", c.Callout)
	}
}

// The x axis never holds more labels than fit, and names the months of a
// year.
func TestChartLabelsFit(t *testing.T) {
	for _, n := range []int{1, 4, 31, 90, 365, 400} {
		var days []Day
		start := time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)
		for i := range n {
			days = append(days, countDay(start.AddDate(0, 0, i).Format("2006-01-02"), i64(100), i64(100), "match"))
		}
		for _, width := range []float64{960, 380} {
			c := newChart("chart", days, width)
			if fit := int((width - c.Left) / 72); len(c.Labels) > max(fit, 2) || len(c.Labels) == 0 {
				t.Errorf("%d days at %v: %d labels, want 1 to %d", n, width, len(c.Labels), fit)
			}
			for i := 1; i < len(c.Labels); i++ {
				if c.Labels[i].X-c.Labels[i-1].X < 60 {
					t.Errorf("%d days at %v: labels %q and %q overlap", n, width, c.Labels[i-1].Text, c.Labels[i].Text)
				}
			}
			if n == 365 && width == 960 && c.Labels[0].Text != "Nov 2025" {
				t.Errorf("a year's first label %q, want Nov 2025", c.Labels[0].Text)
			}
		}
	}
}
