package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCompareLinks(t *testing.T) {
	t.Parallel()
	d := date("2026-11-25")
	tests := []struct {
		name     string
		api      map[string]int64
		local    map[string]int64
		complete bool
		want     []LinkDiff
	}{
		{
			name:     "largest_delta_first_matching_links_left_out",
			api:      map[string]int64{"lnk_spring_sale": 500, "lnk_docs": 40, "lnk_same": 7},
			local:    map[string]int64{"lnk_spring_sale": 102, "lnk_docs": 41, "lnk_same": 7},
			complete: true,
			want: []LinkDiff{
				{Date: d, LinkID: "lnk_spring_sale", API: 500, Local: 102, Delta: -398, Status: Missing},
				{Date: d, LinkID: "lnk_docs", API: 40, Local: 41, Delta: 1, Status: Surplus},
			},
		},
		{
			name:     "link_on_one_side_only",
			api:      map[string]int64{"lnk_elido_only": 3},
			local:    map[string]int64{"lnk_store_only": 2},
			complete: true,
			want: []LinkDiff{
				{Date: d, LinkID: "lnk_elido_only", API: 3, Local: 0, Delta: -3, Status: Missing},
				{Date: d, LinkID: "lnk_store_only", API: 0, Local: 2, Delta: 2, Status: Surplus},
			},
		},
		{
			// The fallback checked lnk_a only: lnk_b is not assumed to match
			// nor to differ.
			name:     "unchecked_links_left_out",
			api:      map[string]int64{"lnk_a": 0},
			local:    map[string]int64{"lnk_a": 4, "lnk_b": 9},
			complete: false,
			want:     []LinkDiff{{Date: d, LinkID: "lnk_a", API: 0, Local: 4, Delta: 4, Status: Surplus}},
		},
		{name: "not_read", api: nil, local: map[string]int64{"lnk_a": 1}, complete: true, want: nil},
		{
			name:     "ties_by_link_id",
			api:      map[string]int64{"b": 2, "a": 2},
			local:    map[string]int64{},
			complete: true,
			want: []LinkDiff{
				{Date: d, LinkID: "a", API: 2, Delta: -2, Status: Missing},
				{Date: d, LinkID: "b", API: 2, Delta: -2, Status: Missing},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CompareLinks(d, tt.api, tt.local, tt.complete)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// hoursOf builds a day's hourly series from counts, starting at the day's
// first instant in loc.
func hoursOf(d Date, loc *time.Location, counts ...int64) []HourCount {
	start, _ := d.Bounds(loc)
	var out []HourCount
	for i, c := range counts {
		out = append(out, HourCount{Start: start.Add(time.Duration(i) * time.Hour), Clicks: c})
	}
	return out
}

func flat(n int, v int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func gapDay(d string, api, local int64) DayResult {
	delta := local - api
	st := Surplus
	if delta < 0 {
		st = Missing
	}
	return DayResult{Date: date(d), API: ptr(api), Local: ptr(local), Delta: &delta, Status: st, Severity: Warn, Settled: true}
}

func kinds(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind)
	}
	return out
}

func TestExplainWhereInTheDay(t *testing.T) {
	t.Parallel()
	warsaw := mustLoad(t, "Europe/Warsaw")
	d := "2026-11-25"
	api := flat(24, 100)
	outage := append([]int64(nil), api...)
	outage[2], outage[3] = 20, 60 // 02:00-04:00 lost 120
	leak := append([]int64(nil), api...)
	for i := range leak {
		if i%2 == 0 {
			leak[i] = 95
		}
	}
	tests := []struct {
		name    string
		local   []int64
		wantMsg string
		kind    string
	}{
		{"outage_in_two_hours", outage, "the gap is 02:00 CET–04:00 CET (Europe/Warsaw): -120 of the day's -120 clicks", FindingGapWindow},
		{"steady_leak_over_the_day", leak, "spread over the day: 12 of 24 hours differ", FindingGapSpread},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sum int64
			for _, c := range tt.local {
				sum += c
			}
			res := Result{Days: []DayResult{gapDay(d, 2400, sum)}}
			got := Explain(res, map[Date]DayDetail{date(d): {
				APIHours: hoursOf(date(d), warsaw, api...), LocalHours: hoursOf(date(d), warsaw, tt.local...),
			}}, warsaw)
			if len(got.Findings) != 1 || got.Findings[0].Kind != tt.kind || !strings.Contains(got.Findings[0].Message, tt.wantMsg) {
				t.Errorf("findings %+v, want one %s containing %q", got.Findings, tt.kind, tt.wantMsg)
			}
			var hours int
			for _, h := range got.Days[0].HoursWithGap {
				hours++
				if h.Delta == 0 {
					t.Errorf("hour %s listed with no gap", h.Start)
				}
			}
			if hours == 0 {
				t.Error("no hours_with_gap")
			}
		})
	}
}

func TestExplainRemainderAndBudget(t *testing.T) {
	t.Parallel()
	d := "2026-11-25"
	res := Result{Days: []DayResult{gapDay(d, 120, 100)}}
	got := Explain(res, map[Date]DayDetail{date(d): {
		// The fallback checked lnk_a and lnk_b: they explain -8 of -20.
		APILinks:       map[string]int64{"lnk_a": 60, "lnk_b": 48},
		LocalLinks:     map[string]int64{"lnk_a": 52, "lnk_b": 48},
		UncheckedLinks: 3,
	}}, time.UTC)
	if diff := cmp.Diff([]string{FindingUnexplained, FindingUnchecked}, kinds(got.Findings)); diff != "" {
		t.Fatalf("finding kinds (-want +got):\n%s", diff)
	}
	for _, want := range []string{"-12 of the day's -20", "never recorded"} {
		if !strings.Contains(got.Findings[0].Message, want) {
			t.Errorf("remainder finding %q lacks %q", got.Findings[0].Message, want)
		}
	}
	if !strings.Contains(got.Findings[1].Message, "3 links were not checked") || !strings.Contains(got.Findings[1].Message, "not implied to match") {
		t.Errorf("budget finding: %q", got.Findings[1].Message)
	}
}

func TestExplainAcrossDays(t *testing.T) {
	t.Parallel()
	ny := mustLoad(t, "America/New_York")
	a, b := date("2026-11-24"), date("2026-11-25")
	// Elido's hours from the 23rd to the 26th (New York): each day its own
	// level, and an evening burst on the 24th.
	levels := map[Date]int64{a.AddDays(-1): 8, a: 12, b: 9, b.AddDays(1): 11}
	elidoHours := map[Date][]int64{}
	for d, level := range levels {
		elidoHours[d] = flat(24, level)
	}
	for h := 20; h < 24; h++ {
		elidoHours[a][h] += 15
	}
	// A daily store whose days are UTC days, 5 hours early in New York:
	// its day d holds the last 5 hours of d-1 and the first 19 of d.
	var sum = func(xs []int64) (n int64) {
		for _, x := range xs {
			n += x
		}
		return n
	}
	utcDay := func(d Date) int64 { return sum(elidoHours[d.AddDays(-1)][19:]) + sum(elidoHours[d][:19]) }
	shiftedDays := []DayResult{gapDay("2026-11-24", sum(elidoHours[a]), utcDay(a)), gapDay("2026-11-25", sum(elidoHours[b]), utcDay(b))}
	shiftedDetails := map[Date]DayDetail{}
	for d, hs := range elidoHours {
		shiftedDetails[d] = DayDetail{APIHours: hoursOf(d, ny, hs...)}
	}
	withoutNeighbours := map[Date]DayDetail{a: shiftedDetails[a], b: shiftedDetails[b]}
	tests := []struct {
		name         string
		days         []DayResult
		details      map[Date]DayDetail
		wantKinds    []string
		wantInFirstF string
	}{
		{
			// A daily store whose days are UTC days: the offset is found
			// from Elido's hours of the two days and their neighbours.
			name:         "utc_days_in_new_york_without_store_hours",
			days:         shiftedDays,
			details:      shiftedDetails,
			wantKinds:    []string{FindingBoundaryShift},
			wantInFirstF: "likely run 5h early",
		},
		{
			name:         "shift_without_neighbour_hours_has_no_offset",
			days:         shiftedDays,
			details:      withoutNeighbours,
			wantKinds:    []string{FindingBoundaryShift},
			wantInFirstF: "offset is not estimated",
		},
		{
			// An events store whose timestamps are 3 hours late: its hourly
			// counts are Elido's moved by three hours.
			name: "timestamps_shifted_three_hours",
			days: []DayResult{gapDay("2026-11-24", 240, 230), gapDay("2026-11-25", 240, 250)},
			details: func() map[Date]DayDetail {
				apiA := append(flat(21, 10), 5, 2, 3)
				apiB := append([]int64{7, 1, 2}, flat(21, 10)...)
				localA := append([]int64{0, 0, 0}, apiA[:21]...)
				localB := append(append([]int64(nil), apiA[21:]...), apiB[:21]...)
				return map[Date]DayDetail{
					a: {APIHours: hoursOf(a, ny, apiA...), LocalHours: hoursOf(a, ny, localA...)},
					b: {APIHours: hoursOf(b, ny, apiB...), LocalHours: hoursOf(b, ny, localB...)},
				}
			}(),
			wantKinds:    []string{FindingBoundaryShift},
			wantInFirstF: "match Elido's 3h later",
		},
		{
			// An unrelated loss and duplicate that happen to cancel: the
			// hourly counts show gaps in the middle of each day.
			name: "loss_and_duplicate_are_not_a_shift",
			days: []DayResult{gapDay("2026-11-24", 240, 228), gapDay("2026-11-25", 240, 252)},
			details: func() map[Date]DayDetail {
				localA, localB := flat(24, 10), flat(24, 10)
				localA[11] = -2 + 0
				localB[15] = 22
				return map[Date]DayDetail{
					a: {APIHours: hoursOf(a, ny, flat(24, 10)...), LocalHours: hoursOf(a, ny, localA...)},
					b: {APIHours: hoursOf(b, ny, flat(24, 10)...), LocalHours: hoursOf(b, ny, localB...)},
				}
			}(),
			wantKinds: nil,
		},
		{
			// Without hours, opposite gaps that do not cancel but leave the
			// window whole (three days) point at boundaries too.
			name: "window_adds_up_while_days_differ",
			days: []DayResult{gapDay("2026-11-24", 200, 180),
				{Date: b, API: ptr(200), Local: ptr(200), Delta: ptr(0), Status: Match, Severity: OK, Settled: true},
				gapDay("2026-11-26", 200, 220)},
			wantKinds:    []string{FindingWindowBalances},
			wantInFirstF: "the window's totals match",
		},
		{
			name:      "small_opposite_gaps_without_hours_are_not_a_shift",
			days:      []DayResult{gapDay("2026-11-24", 50, 49), gapDay("2026-11-25", 50, 51)},
			wantKinds: nil,
		},
		{
			name: "silent_day_among_busy_ones",
			days: []DayResult{
				{Date: a, API: ptr(0), Local: ptr(0), Delta: ptr(0), Status: Match},
				{Date: b, API: ptr(300), Local: ptr(300), Delta: ptr(0), Status: Match},
				{Date: b.AddDays(1), API: ptr(280), Local: ptr(280), Delta: ptr(0), Status: Match},
			},
			wantKinds:    []string{FindingSilentDay},
			wantInFirstF: "2026-11-24 has no clicks on either side",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Result{Days: tt.days}
			for _, d := range tt.days {
				res.Totals.API += *d.API
				res.Totals.Local += *d.Local
			}
			res.Totals.Delta = res.Totals.Local - res.Totals.API
			var got []Finding
			for _, f := range Explain(res, tt.details, ny).Findings {
				if f.Kind != FindingGapWindow && f.Kind != FindingGapSpread {
					got = append(got, f)
				} else if len(tt.wantKinds) > 0 && tt.wantKinds[0] == FindingBoundaryShift {
					// A day a shift explains has no outage or leak finding.
					t.Errorf("a shifted day also has %s: %s", f.Kind, f.Message)
				}
			}
			if diff := cmp.Diff(tt.wantKinds, kinds(got)); diff != "" {
				t.Fatalf("finding kinds (-want +got):\n%s\n%+v", diff, got)
			}
			if tt.wantInFirstF != "" && !strings.Contains(got[0].Message, tt.wantInFirstF) {
				t.Errorf("finding %q lacks %q", got[0].Message, tt.wantInFirstF)
			}
		})
	}
}

func TestCompareHoursOnDSTDay(t *testing.T) {
	t.Parallel()
	warsaw := mustLoad(t, "Europe/Warsaw")
	d := date("2026-10-25")
	api := hoursOf(d, warsaw, flat(25, 4)...)
	local := hoursOf(d, warsaw, flat(25, 4)...)
	local[3].Clicks = 1 // the second 02:00 (CET)
	got := CompareHours(api, local)
	if len(got) != 1 || got[0].Delta != -3 || got[0].Start.In(warsaw).Format("15:04 MST") != "02:00 CET" {
		t.Errorf("got %+v, want one hour, 02:00 CET, delta -3", got)
	}
}
