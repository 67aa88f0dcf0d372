package reconcile

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCheckedArithmetic(t *testing.T) {
	type result struct {
		N  int64
		OK bool
	}
	tests := []struct {
		name     string
		a, b     int64
		add, sub result
	}{
		{"small", 7, 3, result{10, true}, result{4, true}},
		{"zero", 0, 0, result{0, true}, result{0, true}},
		{"max_plus_zero", math.MaxInt64, 0, result{math.MaxInt64, true}, result{math.MaxInt64, true}},
		{"max_plus_one_overflows", math.MaxInt64, 1, result{0, false}, result{math.MaxInt64 - 1, true}},
		{"max_plus_max_overflows", math.MaxInt64, math.MaxInt64, result{0, false}, result{0, true}},
		{"min_minus_one_overflows", math.MinInt64, -1, result{0, false}, result{math.MinInt64 + 1, true}},
		{"min_plus_min_overflows", math.MinInt64, math.MinInt64, result{0, false}, result{0, true}},
		{"zero_minus_min_overflows", 0, math.MinInt64, result{math.MinInt64, true}, result{0, false}},
		{"max_minus_min_overflows", math.MaxInt64, math.MinInt64, result{-1, true}, result{0, false}},
		{"min_minus_max_overflows", math.MinInt64, math.MaxInt64, result{-1, true}, result{0, false}},
		{"minus_one_minus_min", -1, math.MinInt64, result{0, false}, result{math.MaxInt64, true}},
		{"min_plus_max", math.MinInt64, math.MaxInt64, result{-1, true}, result{0, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got result
			got.N, got.OK = AddClicks(tt.a, tt.b)
			if diff := cmp.Diff(tt.add, got); diff != "" {
				t.Errorf("AddClicks(%d, %d) (-want +got):\n%s", tt.a, tt.b, diff)
			}
			got.N, got.OK = SubClicks(tt.a, tt.b)
			if diff := cmp.Diff(tt.sub, got); diff != "" {
				t.Errorf("SubClicks(%d, %d) (-want +got):\n%s", tt.a, tt.b, diff)
			}
		})
	}
}

// A count no real day can hold (a custom query returning 2^63−1, Elido
// answering MaxInt64) makes its day unverifiable, never a gap, and the
// window's totals stay the sum of the days that could be verified.
func TestCompareCountsOutOfRange(t *testing.T) {
	utc := time.UTC
	w := Window{From: date("2026-11-26"), To: date("2026-11-28"), Loc: utc}
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		api, local map[string]int64
		summaries  []SummaryCheck
		want       []day
		wantTotals Totals
		wantReason map[string]string // a day's reason must contain this
	}{
		{
			name:  "store_count_at_int64_max",
			api:   map[string]int64{"2026-11-26": 10, "2026-11-27": 20, "2026-11-28": 30},
			local: map[string]int64{"2026-11-26": 10, "2026-11-27": math.MaxInt64, "2026-11-28": 30},
			want: []day{
				{"2026-11-26", n(10), n(10), n(0), Match, OK},
				{"2026-11-27", n(20), n(math.MaxInt64), nil, Unverifiable, OK},
				{"2026-11-28", n(30), n(30), n(0), Match, OK},
			},
			wantTotals: Totals{API: 40, Local: 40},
			wantReason: map[string]string{"2026-11-27": "out of range"},
		},
		{
			name:      "elido_count_at_int64_max_on_every_day",
			api:       map[string]int64{"2026-11-26": math.MaxInt64, "2026-11-27": math.MaxInt64, "2026-11-28": math.MaxInt64},
			local:     map[string]int64{"2026-11-26": 1, "2026-11-27": 2, "2026-11-28": 3},
			summaries: []SummaryCheck{{date("2026-11-26"), date("2026-11-28"), math.MaxInt64}},
			want: []day{
				{"2026-11-26", n(math.MaxInt64), n(1), nil, Unverifiable, OK},
				{"2026-11-27", n(math.MaxInt64), n(2), nil, Unverifiable, OK},
				{"2026-11-28", n(math.MaxInt64), n(3), nil, Unverifiable, OK},
			},
			wantTotals: Totals{},
			wantReason: map[string]string{"2026-11-26": "out of range", "2026-11-28": "out of range"},
		},
		{
			name:  "int64_min_on_both_sides",
			api:   map[string]int64{"2026-11-26": math.MinInt64, "2026-11-27": 5, "2026-11-28": 5},
			local: map[string]int64{"2026-11-26": math.MinInt64, "2026-11-27": 5, "2026-11-28": math.MinInt64},
			want: []day{
				{"2026-11-26", n(math.MinInt64), n(math.MinInt64), nil, Unverifiable, OK},
				{"2026-11-27", n(5), n(5), n(0), Match, OK},
				{"2026-11-28", n(5), n(math.MinInt64), nil, Unverifiable, OK},
			},
			wantTotals: Totals{API: 5, Local: 5},
			wantReason: map[string]string{"2026-11-26": "out of range", "2026-11-28": "out of range"},
		},
		{
			name:  "negative_count",
			api:   map[string]int64{"2026-11-26": 10, "2026-11-27": 10, "2026-11-28": 10},
			local: map[string]int64{"2026-11-26": -3, "2026-11-27": 10, "2026-11-28": 10},
			want: []day{
				{"2026-11-26", n(10), n(-3), nil, Unverifiable, OK},
				{"2026-11-27", n(10), n(10), n(0), Match, OK},
				{"2026-11-28", n(10), n(10), n(0), Match, OK},
			},
			wantTotals: Totals{API: 20, Local: 20},
			wantReason: map[string]string{"2026-11-26": "out of range"},
		},
		{
			name:      "largest_count_still_compared",
			api:       map[string]int64{"2026-11-26": MaxClicks, "2026-11-27": 0, "2026-11-28": 0},
			local:     map[string]int64{"2026-11-26": 0, "2026-11-27": 0, "2026-11-28": MaxClicks},
			summaries: []SummaryCheck{{date("2026-11-26"), date("2026-11-28"), MaxClicks}},
			want: []day{
				{"2026-11-26", n(MaxClicks), n(0), n(-MaxClicks), Missing, Fail},
				{"2026-11-27", n(0), n(0), n(0), Match, OK},
				{"2026-11-28", n(0), n(MaxClicks), n(MaxClicks), Surplus, Fail},
			},
			wantTotals: Totals{API: MaxClicks, Local: MaxClicks, Delta: 0, APISummary: n(MaxClicks)},
		},
		{
			name:      "summary_beyond_range_is_not_a_total",
			api:       map[string]int64{"2026-11-26": 1, "2026-11-27": 1, "2026-11-28": 1},
			local:     map[string]int64{"2026-11-26": 1, "2026-11-27": 1, "2026-11-28": 1},
			summaries: []SummaryCheck{{date("2026-11-26"), date("2026-11-27"), math.MaxInt64}, {date("2026-11-28"), date("2026-11-28"), math.MaxInt64}},
			want: []day{
				{"2026-11-26", n(1), n(1), n(0), Unverifiable, OK},
				{"2026-11-27", n(1), n(1), n(0), Unverifiable, OK},
				{"2026-11-28", n(1), n(1), n(0), Unverifiable, OK},
			},
			wantTotals: Totals{},
			wantReason: map[string]string{"2026-11-26": "out of range"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(Input{Window: w, Now: now, Tolerance: Tolerance{FailAbs: 10},
				API: readings(tt.api), Local: readings(tt.local), Summaries: tt.summaries})
			if diff := cmp.Diff(tt.want, summarize(got)); diff != "" {
				t.Errorf("days (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTotals, got.Totals); diff != "" {
				t.Errorf("totals (-want +got):\n%s", diff)
			}
			for _, d := range got.Days {
				if d.Status == Unverifiable && d.Reason == "" {
					t.Errorf("%s is unverifiable with no reason", d.Date)
				}
				if want, ok := tt.wantReason[d.Date.String()]; ok && !strings.Contains(d.Reason, want) {
					t.Errorf("%s reason %q, want it to say %q", d.Date, d.Reason, want)
				}
			}
			for _, f := range got.Findings {
				if strings.Contains(f.Message, "%!") {
					t.Errorf("finding %q is misformatted", f.Message)
				}
			}
		})
	}
}

// Grade never wraps the difference of two counts far apart.
func TestGradeFarApart(t *testing.T) {
	type verdict struct {
		Status   Status
		Severity Severity
	}
	tests := []struct {
		name       string
		api, local int64
		want       verdict
	}{
		{"max_against_min_is_missing", math.MaxInt64, math.MinInt64, verdict{Missing, Fail}},
		{"min_against_max_is_surplus", math.MinInt64, math.MaxInt64, verdict{Surplus, Fail}},
		{"max_against_zero_is_missing", math.MaxInt64, 0, verdict{Missing, Fail}},
		{"max_against_max_matches", math.MaxInt64, math.MaxInt64, verdict{Match, OK}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got verdict
			got.Status, got.Severity = Tolerance{Abs: 1, FailAbs: 10}.Grade(tt.api, tt.local)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Grade(%d, %d) (-want +got):\n%s", tt.api, tt.local, diff)
			}
		})
	}
}
