package reconcile

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestGrade(t *testing.T) {
	t.Parallel()
	tol := Tolerance{Abs: 2, Pct: 1, FailAbs: 10, FailPct: 5}
	tests := []struct {
		name         string
		api, local   int64
		wantStatus   Status
		wantSeverity Severity
	}{
		{"equal", 100, 100, Match, OK},
		{"both_zero", 0, 0, Match, OK},
		{"at_abs_tolerance", 100, 98, Match, OK},
		{"just_past_abs_tolerance", 100, 97, Missing, Warn},
		{"surplus_past_tolerance", 100, 103, Surplus, Warn},
		// 1% of 1000 is 10: the share wins over the absolute 2.
		{"at_pct_tolerance", 1000, 990, Match, OK},
		{"just_past_pct_tolerance", 1000, 989, Missing, Warn},
		{"at_fail_abs", 100, 90, Missing, Warn},
		{"just_past_fail_abs", 100, 89, Missing, Fail},
		// 5% of 1000 is 50.
		{"at_fail_pct", 1000, 950, Missing, Warn},
		{"just_past_fail_pct", 1000, 949, Missing, Fail},
		{"store_has_clicks_elido_has_none", 0, 3, Surplus, Warn},
		{"store_empty_elido_busy", 500, 0, Missing, Fail},
		{"large_surplus", 100, 1000, Surplus, Fail},
	}
	// The defaults (RECON_FAIL_ABS=10, RECON_FAIL_PCT=5) on the cases that
	// set them: a small workspace losing 12% of a day fails, a busy one
	// does not fail on a fraction of a percent, and a quiet day does not
	// fail on a handful of clicks.
	defaults := Tolerance{FailAbs: 10, FailPct: 5}
	for _, tt := range []struct {
		name         string
		api, local   int64
		wantSeverity Severity
	}{
		{"small_workspace_loses_12_pct", 516, 456, Fail},
		{"busy_workspace_noise", 1_000_000, 998_000, Warn},
		{"busy_workspace_loses_6_pct", 1_000_000, 940_000, Fail},
		{"quiet_day_few_clicks", 40, 32, Warn},
		{"quiet_day_loses_11", 40, 29, Fail},
	} {
		t.Run("defaults_"+tt.name, func(t *testing.T) {
			if _, sev := defaults.Grade(tt.api, tt.local); sev != tt.wantSeverity {
				t.Errorf("Grade(%d, %d) = %s, want %s", tt.api, tt.local, sev, tt.wantSeverity)
			}
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, severity := tol.Grade(tt.api, tt.local)
			if status != tt.wantStatus || severity != tt.wantSeverity {
				t.Errorf("Grade(%d, %d) = %s/%s, want %s/%s", tt.api, tt.local, status, severity, tt.wantStatus, tt.wantSeverity)
			}
		})
	}
	t.Run("zero_tolerance_flags_one_click", func(t *testing.T) {
		if s, sev := (Tolerance{}).Grade(10, 9); s != Missing || sev != Fail {
			t.Errorf("got %s/%s, want missing/fail with all thresholds zero", s, sev)
		}
	})
}

func TestToleranceValidate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tol  Tolerance
		want string
	}{
		{Tolerance{Abs: -1}, "RECON_TOLERANCE_ABS"},
		{Tolerance{FailAbs: -1}, "RECON_FAIL_ABS"},
		{Tolerance{Pct: 101}, "RECON_TOLERANCE_PCT"},
		{Tolerance{FailPct: -0.5}, "RECON_FAIL_PCT"},
	} {
		if err := tt.tol.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tt.tol, err, tt.want)
		}
	}
	if err := (Tolerance{Abs: 5, Pct: 0.5, FailAbs: 100, FailPct: 2}).Validate(); err != nil {
		t.Errorf("valid tolerance rejected: %v", err)
	}
}

// day is a compact expectation for TestCompare.
type day struct {
	Date     string
	API      *int64
	Local    *int64
	Delta    *int64
	Status   Status
	Severity Severity
}

func n(v int64) *int64 { return &v }

func summarize(r Result) []day {
	var out []day
	for _, d := range r.Days {
		out = append(out, day{d.Date.String(), d.API, d.Local, d.Delta, d.Status, d.Severity})
	}
	return out
}

func readings(vals map[string]int64) map[Date]Reading {
	m := map[Date]Reading{}
	for k, v := range vals {
		m[date(k)] = Known(v)
	}
	return m
}

func TestCompare(t *testing.T) {
	t.Parallel()
	warsaw := mustLoad(t, "Europe/Warsaw")
	w := Window{From: date("2026-11-26"), To: date("2026-11-28"), Loc: warsaw}
	// 03:00 UTC on the 29th: the 28th (Warsaw) ended 4 hours ago.
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	tol := Tolerance{FailAbs: 10}
	apiErr := errors.New("GET timeseries: 503 Service Unavailable after 5 attempts (request req_9)")
	tests := []struct {
		name         string
		in           Input
		want         []day
		wantTotals   Totals
		wantFindings []string // kinds
	}{
		{
			name: "all_match",
			in: Input{API: readings(map[string]int64{"2026-11-26": 10, "2026-11-27": 20, "2026-11-28": 30}),
				Local:     readings(map[string]int64{"2026-11-26": 10, "2026-11-27": 20, "2026-11-28": 30}),
				Summaries: []SummaryCheck{{date("2026-11-26"), date("2026-11-28"), 60}}},
			want: []day{
				{"2026-11-26", n(10), n(10), n(0), Match, OK},
				{"2026-11-27", n(20), n(20), n(0), Match, OK},
				{"2026-11-28", n(30), n(30), n(0), Match, OK},
			},
			wantTotals: Totals{API: 60, Local: 60, Delta: 0, APISummary: n(60)},
		},
		{
			name: "lost_click_and_duplicate",
			in: Input{API: readings(map[string]int64{"2026-11-26": 100, "2026-11-27": 100, "2026-11-28": 100}),
				Local:     readings(map[string]int64{"2026-11-26": 99, "2026-11-27": 120, "2026-11-28": 100}),
				Summaries: []SummaryCheck{{date("2026-11-26"), date("2026-11-28"), 300}}},
			want: []day{
				{"2026-11-26", n(100), n(99), n(-1), Missing, Warn},
				{"2026-11-27", n(100), n(120), n(20), Surplus, Fail},
				{"2026-11-28", n(100), n(100), n(0), Match, OK},
			},
			wantTotals: Totals{API: 300, Local: 319, Delta: 19, APISummary: n(300)},
		},
		{
			name: "api_error_is_unverifiable_never_missing",
			in: Input{API: map[Date]Reading{date("2026-11-26"): Unknown(apiErr), date("2026-11-27"): Known(5), date("2026-11-28"): Known(5)},
				Local:     readings(map[string]int64{"2026-11-26": 0, "2026-11-27": 5, "2026-11-28": 5}),
				Summaries: []SummaryCheck{{date("2026-11-26"), date("2026-11-28"), 10}}},
			want: []day{
				{"2026-11-26", nil, n(0), nil, Unverifiable, OK},
				{"2026-11-27", n(5), n(5), n(0), Match, OK},
				{"2026-11-28", n(5), n(5), n(0), Match, OK},
			},
			wantTotals:   Totals{API: 10, Local: 10, Delta: 0, APISummary: n(10)},
			wantFindings: []string{FindingUnverifiable},
		},
		{
			name: "store_error_is_unverifiable",
			in: Input{API: readings(map[string]int64{"2026-11-26": 7, "2026-11-27": 7, "2026-11-28": 7}),
				Local:     map[Date]Reading{date("2026-11-26"): Known(7), date("2026-11-27"): Unknown(errors.New("connection refused")), date("2026-11-28"): Known(7)},
				Summaries: []SummaryCheck{{date("2026-11-26"), date("2026-11-28"), 21}}},
			want: []day{
				{"2026-11-26", n(7), n(7), n(0), Match, OK},
				{"2026-11-27", n(7), nil, nil, Unverifiable, OK},
				{"2026-11-28", n(7), n(7), n(0), Match, OK},
			},
			wantTotals:   Totals{API: 14, Local: 14, Delta: 0, APISummary: n(21)},
			wantFindings: []string{FindingUnverifiable},
		},
		{
			name: "unread_day_is_unverifiable",
			in: Input{API: readings(map[string]int64{"2026-11-26": 7, "2026-11-27": 7}),
				Local: readings(map[string]int64{"2026-11-26": 7, "2026-11-27": 7, "2026-11-28": 7})},
			want: []day{
				{"2026-11-26", n(7), n(7), n(0), Match, OK},
				{"2026-11-27", n(7), n(7), n(0), Match, OK},
				{"2026-11-28", nil, n(7), nil, Unverifiable, OK},
			},
			wantTotals:   Totals{API: 14, Local: 14},
			wantFindings: []string{FindingUnverifiable},
		},
		{
			name: "summary_disagreement_makes_range_unverifiable",
			in: Input{API: readings(map[string]int64{"2026-11-26": 10, "2026-11-27": 20, "2026-11-28": 30}),
				Local:     readings(map[string]int64{"2026-11-26": 5, "2026-11-27": 20, "2026-11-28": 30}),
				Summaries: []SummaryCheck{{date("2026-11-26"), date("2026-11-28"), 61}}},
			want: []day{
				{"2026-11-26", n(10), n(5), n(-5), Unverifiable, OK},
				{"2026-11-27", n(20), n(20), n(0), Unverifiable, OK},
				{"2026-11-28", n(30), n(30), n(0), Unverifiable, OK},
			},
			wantTotals:   Totals{APISummary: n(61)},
			wantFindings: []string{FindingSummaryMismatch, FindingUnverifiable},
		},
		{
			name: "summary_disagreement_in_one_range_only",
			in: Input{API: readings(map[string]int64{"2026-11-26": 10, "2026-11-27": 20, "2026-11-28": 30}),
				Local: readings(map[string]int64{"2026-11-26": 10, "2026-11-27": 20, "2026-11-28": 29}),
				Summaries: []SummaryCheck{
					{date("2026-11-26"), date("2026-11-27"), 30},
					{date("2026-11-28"), date("2026-11-28"), 31},
				}},
			want: []day{
				{"2026-11-26", n(10), n(10), n(0), Match, OK},
				{"2026-11-27", n(20), n(20), n(0), Match, OK},
				{"2026-11-28", n(30), n(29), n(-1), Unverifiable, OK},
			},
			wantTotals:   Totals{API: 30, Local: 30, APISummary: n(61)},
			wantFindings: []string{FindingSummaryMismatch, FindingUnverifiable},
		},
		{
			name: "recent_day_is_provisional",
			in: Input{Settle: 6 * time.Hour,
				API:       readings(map[string]int64{"2026-11-26": 10, "2026-11-27": 10, "2026-11-28": 10}),
				Local:     readings(map[string]int64{"2026-11-26": 10, "2026-11-27": 10, "2026-11-28": 4}),
				Summaries: []SummaryCheck{{date("2026-11-26"), date("2026-11-28"), 30}}},
			want: []day{
				{"2026-11-26", n(10), n(10), n(0), Match, OK},
				{"2026-11-27", n(10), n(10), n(0), Match, OK},
				{"2026-11-28", n(10), n(4), n(-6), Provisional, Warn},
			},
			wantTotals: Totals{API: 30, Local: 24, Delta: -6, APISummary: n(30)},
		},
		{
			name: "day_settles_exactly_at_settle_time",
			in: Input{Settle: 4 * time.Hour,
				API:   readings(map[string]int64{"2026-11-26": 1, "2026-11-27": 1, "2026-11-28": 1}),
				Local: readings(map[string]int64{"2026-11-26": 1, "2026-11-27": 1, "2026-11-28": 0})},
			want: []day{
				{"2026-11-26", n(1), n(1), n(0), Match, OK},
				{"2026-11-27", n(1), n(1), n(0), Match, OK},
				{"2026-11-28", n(1), n(0), n(-1), Missing, Warn},
			},
			wantTotals: Totals{API: 3, Local: 2, Delta: -1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Window, in.Now, in.Tolerance = w, now, tol
			got := Compare(in)
			if diff := cmp.Diff(tt.want, summarize(got)); diff != "" {
				t.Errorf("days (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTotals, got.Totals); diff != "" {
				t.Errorf("totals (-want +got):\n%s", diff)
			}
			var kinds []string
			for _, f := range got.Findings {
				kinds = append(kinds, f.Kind)
			}
			if diff := cmp.Diff(tt.wantFindings, kinds); diff != "" {
				t.Errorf("finding kinds (-want +got):\n%s", diff)
			}
			for _, d := range got.Days {
				if d.Status == Unverifiable && d.Reason == "" {
					t.Errorf("%s is unverifiable with no reason", d.Date)
				}
			}
		})
	}
}

func TestCompareReportsHoursAndReasons(t *testing.T) {
	t.Parallel()
	warsaw := mustLoad(t, "Europe/Warsaw")
	w := Window{From: date("2026-10-24"), To: date("2026-10-26"), Loc: warsaw}
	apiErr := errors.New("401 Unauthorized (request req_1)")
	got := Compare(Input{
		Window: w, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		API:   map[Date]Reading{date("2026-10-24"): Unknown(apiErr), date("2026-10-25"): Unknown(apiErr), date("2026-10-26"): Unknown(apiErr)},
		Local: readings(map[string]int64{"2026-10-24": 1, "2026-10-25": 1, "2026-10-26": 1}),
	})
	var hours []float64
	for _, d := range got.Days {
		hours = append(hours, d.Hours)
		if !strings.Contains(d.Reason, "req_1") {
			t.Errorf("%s reason %q does not carry the API error", d.Date, d.Reason)
		}
	}
	if diff := cmp.Diff([]float64{24, 25, 24}, hours); diff != "" {
		t.Errorf("hours (-want +got):\n%s", diff)
	}
	if len(got.Findings) != 1 || !strings.Contains(got.Findings[0].Message, "2026-10-24..2026-10-26") {
		t.Errorf("findings = %+v, want one naming the range", got.Findings)
	}
}

// TestReasonNamesItsSourceOnce: an Elido error that already starts with
// "elido:" is not labelled twice in a day's reason.
func TestReasonNamesItsSourceOnce(t *testing.T) {
	t.Parallel()
	d := date("2026-11-26")
	w := Window{From: d, To: d, Loc: time.UTC}
	res := Compare(Input{
		Window: w,
		Now:    time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC),
		API:    map[Date]Reading{d: Unknown(errors.New("elido: GET timeseries: 503"))},
		Local:  map[Date]Reading{d: Unknown(errors.New("store: connection refused"))},
	})
	if got, want := res.Days[0].Reason, "Elido: GET timeseries: 503; store: connection refused"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
}
