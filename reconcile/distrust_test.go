package reconcile

import (
	"strings"
	"testing"
	"time"
)

// threeDays compares three days of Warsaw in which the store has local
// clicks for each day and Elido api.
func threeDays(t *testing.T, api, local [3]int64) Result {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Warsaw")
	if err != nil {
		t.Fatal(err)
	}
	w := Window{From: date("2026-11-01"), To: date("2026-11-03"), Loc: loc}
	in := Input{Window: w, Now: time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC), Settle: time.Hour,
		API: map[Date]Reading{}, Local: map[Date]Reading{}}
	for i, d := range w.Days() {
		in.API[d], in.Local[d] = Known(api[i]), Known(local[i])
	}
	return Compare(in)
}

// A day's store rows that do not add up to the store's day total say the
// store's two queries disagree: the day is unverifiable, names both, blames
// no link and not Elido, and leaves the totals. Elido is blamed only when
// its own rows do not add up to its own count.
func TestExplainStoreQueriesDisagree(t *testing.T) {
	const totalQ, linkQ = "the day-total query (STORE_TOTAL_QUERY_FILE)", "the per-link query (STORE_QUERY_FILE)"
	tests := []struct {
		name       string
		det        DayDetail
		wantStatus Status
		wantReason []string
		wantKinds  string
		wantTotals Totals
		notBlamed  string
	}{
		{
			// The total counts lnk_docs twice: +12 over a store that holds
			// exactly Elido's clicks.
			name: "total_counts_a_link_twice",
			det: DayDetail{APILinks: map[string]int64{}, LocalLinks: map[string]int64{}, LinksComplete: true,
				APILinkSum: ptr(100), LocalLinkSum: ptr(100), TotalQuery: totalQ, LinkQuery: linkQ},
			wantStatus: Unverifiable,
			wantReason: []string{"STORE_TOTAL_QUERY_FILE", "STORE_QUERY_FILE", "112", "100"},
			wantKinds:  FindingStoreQueries + "," + FindingUnverifiable,
			wantTotals: Totals{API: 200, Local: 200},
			notBlamed:  "Elido's per-link",
		},
		{
			// The per-link rows count lnk_docs twice: lnk_docs differs, but
			// the rows do not add up to the day's total.
			name: "links_count_a_link_twice",
			det: DayDetail{APILinks: map[string]int64{"lnk_docs": 12}, LocalLinks: map[string]int64{"lnk_docs": 24}, LinksComplete: true,
				APILinkSum: ptr(100), LocalLinkSum: ptr(124), TotalQuery: totalQ, LinkQuery: linkQ},
			wantStatus: Unverifiable,
			wantReason: []string{"STORE_TOTAL_QUERY_FILE", "STORE_QUERY_FILE"},
			wantKinds:  FindingStoreQueries + "," + FindingUnverifiable,
			wantTotals: Totals{API: 200, Local: 200},
			notBlamed:  "lnk_docs",
		},
		{
			// The store's rows add up; Elido's do not: Elido's own numbers
			// disagree, and it is named with both of them.
			name: "elido_rows_do_not_add_up",
			det: DayDetail{APILinks: map[string]int64{"lnk_docs": 8}, LocalLinks: map[string]int64{"lnk_docs": 22}, LinksComplete: true,
				APILinkSum: ptr(98), LocalLinkSum: ptr(112), TotalQuery: totalQ, LinkQuery: linkQ},
			wantStatus: Surplus,
			wantKinds:  FindingUnexplained,
			wantTotals: Totals{API: 300, Local: 312, Delta: 12},
		},
		{
			// A click written to the day between the two reads: the rows
			// add up to the total read again.
			name: "day_changed_while_read",
			det: DayDetail{APILinks: map[string]int64{}, LocalLinks: map[string]int64{}, LinksComplete: true,
				APILinkSum: ptr(100), LocalLinkSum: ptr(113), LocalRecount: ptr(113), TotalQuery: totalQ, LinkQuery: linkQ},
			wantStatus: Unverifiable,
			wantReason: []string{"changed while it was read", "112, then 113"},
			wantKinds:  FindingUnverifiable,
			wantTotals: Totals{API: 200, Local: 200},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := threeDays(t, [3]int64{100, 100, 100}, [3]int64{100, 112, 100})
			d := res.Days[1].Date
			got := Explain(res, map[Date]DayDetail{d: tt.det}, time.UTC)
			day := got.Days[1]
			if day.Status != tt.wantStatus {
				t.Fatalf("status %s (%s), want %s", day.Status, day.Reason, tt.wantStatus)
			}
			for _, w := range tt.wantReason {
				if !strings.Contains(day.Reason, w) {
					t.Errorf("reason %q does not contain %q", day.Reason, w)
				}
			}
			if k := strings.Join(kinds(got.Findings), ","); k != tt.wantKinds {
				t.Errorf("findings %s, want %s:\n%+v", k, tt.wantKinds, got.Findings)
			}
			if got.Totals != tt.wantTotals {
				t.Errorf("totals %+v, want %+v", got.Totals, tt.wantTotals)
			}
			if tt.wantStatus == Unverifiable && (day.Local != nil || day.Delta != nil || len(got.Links) > 0) {
				t.Errorf("local %v, delta %v, links %+v: nothing is known of an unverifiable day", day.Local, day.Delta, got.Links)
			}
			for _, f := range got.Findings {
				if tt.notBlamed != "" && strings.Contains(f.Message, tt.notBlamed) {
					t.Errorf("finding blames %s: %s", tt.notBlamed, f.Message)
				}
			}
			if tt.name == "elido_rows_do_not_add_up" && !strings.Contains(got.Findings[0].Message, "Elido's per-link counts add up to 98, its daily count is 100") {
				t.Errorf("finding %q does not say Elido's rows add up to 98 of 100", got.Findings[0].Message)
			}
		})
	}
}

// Once the queries disagree on one day, a gap whose rows were not added
// up is not trusted either: the same two queries counted it.
func TestExplainDistrustsUncheckedGaps(t *testing.T) {
	res := threeDays(t, [3]int64{100, 100, 100}, [3]int64{121, 112, 100})
	d := res.Days[1].Date
	got := Explain(res, map[Date]DayDetail{d: {LinksComplete: true, APILinks: map[string]int64{},
		APILinkSum: ptr(100), LocalLinkSum: ptr(100), TotalQuery: "T", LinkQuery: "L"}}, time.UTC)
	if got.Days[0].Status != Unverifiable || !strings.Contains(got.Days[0].Reason, "2026-11-02") {
		t.Errorf("undrilled gap: %s (%s), want unverifiable naming 2026-11-02", got.Days[0].Status, got.Days[0].Reason)
	}
	if got.Days[2].Status != Match {
		t.Errorf("matched day: %s, want match", got.Days[2].Status)
	}
	if got.Totals != (Totals{API: 100, Local: 100}) {
		t.Errorf("totals %+v, want the matched day's", got.Totals)
	}
}

// A store whose ts is local wall-clock time read as UTC moves each day's
// last hour to the next day. With traffic alike from day to day, the
// next day matches: the gap has no opposite gap beside it, and its own
// hours show the shift, with STORE_TIMESTAMP_TZ as the likely fix.
func TestExplainDayShiftedAlone(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Warsaw")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, loc)
	var api, local []HourCount
	var sumAPI, sumLocal int64
	for h := 0; h < 24; h++ {
		at := start.Add(time.Duration(h) * time.Hour)
		a := int64(10 + 5*h)
		l := int64(10 + 5*(h-1)) // the hour before's clicks
		if h == 0 {
			l = 20 // the day before's last hour, a quiet one
		}
		api, local = append(api, HourCount{Start: at, Clicks: a}), append(local, HourCount{Start: at, Clicks: l})
		sumAPI, sumLocal = sumAPI+a, sumLocal+l
	}
	// 2026-11-02 lost its 23:00 hour (125) but gained only 11-01's quiet
	// one (20): 11-03 gained 11-02's and lost its own alike, a match.
	res := threeDays(t, [3]int64{1000, sumAPI, 1000}, [3]int64{1000, sumLocal, 1000})
	d := res.Days[1].Date
	got := Explain(res, map[Date]DayDetail{d: {APIHours: api, LocalHours: local}}, loc)
	var msg string
	for _, f := range got.Findings {
		if f.Kind == FindingBoundaryShift {
			msg = f.Message
		}
		if f.Kind == FindingGapWindow || f.Kind == FindingGapSpread {
			t.Errorf("the shift is explained as a gap in hours: %s", f.Message)
		}
	}
	for _, w := range []string{"2026-11-02 is -105", "shifted by 1h", "later", "STORE_TIMESTAMP_TZ"} {
		if !strings.Contains(msg, w) {
			t.Errorf("shift finding %q does not contain %q", msg, w)
		}
	}
}

// A store that lost a whole day fits any shift of its empty hours: that
// is no shift.
func TestExplainEmptyDayIsNoShift(t *testing.T) {
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	var api, local []HourCount
	for h := 0; h < 24; h++ {
		at := start.Add(time.Duration(h) * time.Hour)
		api, local = append(api, HourCount{Start: at, Clicks: int64(h % 5)}), append(local, HourCount{Start: at})
	}
	res := threeDays(t, [3]int64{1000, 48, 1000}, [3]int64{1000, 0, 1000})
	got := Explain(res, map[Date]DayDetail{res.Days[1].Date: {APIHours: api, LocalHours: local}}, time.UTC)
	for _, f := range got.Findings {
		if f.Kind == FindingBoundaryShift {
			t.Errorf("an empty day is called shifted: %s", f.Message)
		}
	}
}
