package report

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/clickrecon/clickrecon/reconcile"
)

// shardReport reconciles days from..to of a fixed month of counts, as one
// shard of a backfill would.
func shardReport(t *testing.T, workspace, tz, from, to string) Report {
	t.Helper()
	loc, err := time.LoadLocation(tz)
	if err != nil {
		t.Fatal(err)
	}
	w := reconcile.Window{From: date(from), To: date(to), Loc: loc}
	api, local := map[reconcile.Date]reconcile.Reading{}, map[reconcile.Date]reconcile.Reading{}
	for _, d := range w.Days() {
		n := int64(100 + d.Day)
		api[d] = reconcile.Known(n)
		switch d.Day {
		case 3:
			local[d] = reconcile.Known(n - 7)
		case 8:
			local[d] = reconcile.Known(n + 2)
		case 9:
			local[d] = reconcile.Unknown(errCannotRead)
		default:
			local[d] = reconcile.Known(n)
		}
	}
	var sums []reconcile.SummaryCheck
	var total int64
	for _, d := range w.Days() {
		total += api[d].Clicks
	}
	sums = append(sums, reconcile.SummaryCheck{From: w.From, To: w.To, Clicks: total})
	res := reconcile.Compare(reconcile.Input{Window: w, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Tolerance: reconcile.Tolerance{FailAbs: 5}, API: api, Local: local, Summaries: sums})
	return New(res, w, Meta{RunKey: RunKey(workspace, w, "store"), WorkspaceID: workspace, StoreID: StoreID("store"),
		GeneratedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Requests: map[string]int{"summary": 1, "timeseries": 1},
		Drilldown: Drilldown{Mode: "breakdown", Requests: 3}})
}

var errCannotRead = errStr("connection refused")

type errStr string

func (e errStr) Error() string { return string(e) }

// Merging the shards of a backfill, in any order, gives the report one
// run over the whole window would have given.
func TestMergeShards(t *testing.T) {
	t.Parallel()
	whole := shardReport(t, "48213", "Europe/Warsaw", "2026-10-01", "2026-10-10")
	shards := []Report{
		shardReport(t, "48213", "Europe/Warsaw", "2026-10-08", "2026-10-10"),
		shardReport(t, "48213", "Europe/Warsaw", "2026-10-01", "2026-10-04"),
		shardReport(t, "48213", "Europe/Warsaw", "2026-10-05", "2026-10-07"),
	}
	got, err := Merge(shards, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	// Findings are per shard (each shard reports its own unverifiable
	// days); the rest is the same as one run's.
	ignore := cmpopts.IgnoreFields(Report{}, "RunKey", "GeneratedAt", "Findings", "Requests", "Drilldown")
	if diff := cmp.Diff(whole, got, ignore); diff != "" {
		t.Errorf("merged (-one run +merged):\n%s", diff)
	}
	if got.Status != StatusDiscrepancies || got.Coverage.Missing != 1 || got.Coverage.Surplus != 1 || got.Coverage.Unverifiable != 1 {
		t.Errorf("status %s, coverage %+v", got.Status, got.Coverage)
	}
	if got.Requests["timeseries"] != 3 || got.Drilldown.Requests != 9 {
		t.Errorf("requests %v, drill-down %+v: want them summed", got.Requests, got.Drilldown)
	}
	again, _ := Merge([]Report{shards[2], shards[0], shards[1]}, time.Now())
	if again.RunKey != got.RunKey || got.RunKey == whole.RunKey {
		t.Errorf("run keys %q, %q (whole %q): want the same key for the same shards, not a run's", got.RunKey, again.RunKey, whole.RunKey)
	}
}

func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	a := shardReport(t, "48213", "Europe/Warsaw", "2026-10-01", "2026-10-04")
	tests := []struct {
		name   string
		shards []Report
		want   string
	}{
		{"overlap", []Report{a, shardReport(t, "48213", "Europe/Warsaw", "2026-10-04", "2026-10-06")}, "overlap"},
		{"gap", []Report{a, shardReport(t, "48213", "Europe/Warsaw", "2026-10-07", "2026-10-09")}, "no report covers 2026-10-05..2026-10-06"},
		{"two_workspaces", []Report{a, shardReport(t, "99999", "Europe/Warsaw", "2026-10-05", "2026-10-06")}, "two workspaces"},
		{"two_zones", []Report{a, shardReport(t, "48213", "UTC", "2026-10-05", "2026-10-06")}, "two time zones"},
		{"nothing", nil, "no report"},
		{"two_stores", []Report{a, func() Report {
			r := shardReport(t, "48213", "Europe/Warsaw", "2026-10-05", "2026-10-06")
			r.StoreID = StoreID("another store")
			return r
		}()}, "two stores"},
		{"two_stores_beside_one_not_identified", []Report{a, func() Report {
			r := shardReport(t, "48213", "Europe/Warsaw", "2026-10-05", "2026-10-06")
			r.StoreID = ""
			return r
		}(), func() Report {
			r := shardReport(t, "48213", "Europe/Warsaw", "2026-10-07", "2026-10-08")
			r.StoreID = StoreID("another store")
			return r
		}()}, "two stores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Merge(tt.shards, time.Now()); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// A shard whose store was not identified (its store down) is of the
// others' store, whichever comes first.
func TestMergeTakesAShardOfNoStore(t *testing.T) {
	t.Parallel()
	a := shardReport(t, "48213", "Europe/Warsaw", "2026-10-01", "2026-10-04")
	b := shardReport(t, "48213", "Europe/Warsaw", "2026-10-05", "2026-10-06")
	a.StoreID = ""
	for _, shards := range [][]Report{{a, b}, {b, a}} {
		m, err := Merge(shards, time.Now())
		if err != nil || m.StoreID != b.StoreID {
			t.Errorf("Merge = store %q, %v; want %q", m.StoreID, err, b.StoreID)
		}
	}
}

// A merged report is only as true as its days: a shard whose days were
// edited after clickrecon wrote it is refused, naming the shard and the
// day, and nothing is merged.
func TestMergeRefusesEditedDays(t *testing.T) {
	t.Parallel()
	a := shardReport(t, "48213", "Europe/Warsaw", "2026-10-01", "2026-10-04")
	b := shardReport(t, "48213", "Europe/Warsaw", "2026-10-05", "2026-10-07")
	edit := func(r Report, f func(*Report)) Report {
		r.Days = append([]Day(nil), r.Days...)
		f(&r)
		return r
	}
	without := func(days []Day, dates ...string) []Day {
		var out []Day
		for _, d := range days {
			if !slices.Contains(dates, d.Date) {
				out = append(out, d)
			}
		}
		return out
	}
	tests := []struct {
		name   string
		shards []Report
		want   string
	}{
		// The gap of 2026-10-03 goes with them, and the totals are
		// made to agree with what is left.
		{"two_days_deleted", []Report{edit(a, func(r *Report) {
			r.Days = without(r.Days, "2026-10-02", "2026-10-03")
			r.Totals = totalsOf(slices.Clone(r.Days))
		}), b}, "day 2026-10-02 is missing"},
		{"last_day_deleted", []Report{a, edit(b, func(r *Report) {
			r.Days = r.Days[:len(r.Days)-1]
			r.Totals = totalsOf(slices.Clone(r.Days))
		})}, "day 2026-10-07 is missing"},
		{"day_copied_from_the_next_shard", []Report{edit(a, func(r *Report) {
			r.Days = append(r.Days, b.Days[0])
			r.Totals = totalsOf(slices.Clone(r.Days))
		}), b}, "day 2026-10-05 is outside its window 2026-10-01..2026-10-04"},
		{"day_listed_twice", []Report{a, edit(b, func(r *Report) {
			r.Days = append(r.Days[:2], r.Days[1:]...)
			r.Days = r.Days[:len(r.Days)-1]
			r.Totals = totalsOf(slices.Clone(r.Days))
		})}, "day 2026-10-06 is listed twice"},
		{"totals_not_the_sum_of_the_days", []Report{edit(a, func(r *Report) {
			r.Totals.Local += 7
			r.Totals.Delta += 7
		}), b}, "are not the sum of its days"},
		{"delta_edited", []Report{edit(a, func(r *Report) {
			zero := int64(0)
			r.Days[2].Delta = &zero
		}), b}, "day 2026-10-03: delta 0 is not local 96 less api 103"},
		{"malformed_date", []Report{edit(a, func(r *Report) { r.Days[0].Date = "1 Oct" }), b}, "malformed date"},
		{"another_tool", []Report{edit(a, func(r *Report) { r.Tool = "othertool" }), b}, "not by clickrecon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(tt.shards, time.Now())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if tt.name != "another_tool" && !strings.Contains(err.Error(), "shard ") {
				t.Errorf("the error does not name the shard: %v", err)
			}
		})
	}
}

// A shard holding counts no day can hold (from a clickrecon that let them
// through, or edited by hand) is refused: its totals cannot be the sum of
// its days, and a merged total that wraps around is never written.
func TestMergeRefusesCountsOutOfRange(t *testing.T) {
	huge := func(r Report, day int) Report {
		r.Days = append([]Day(nil), r.Days...)
		d := r.Days[day]
		max := int64(math.MaxInt64)
		d.API, d.Local, d.Delta = &max, &max, new(int64)
		r.Days[day] = d
		r.Totals.API, r.Totals.Local, r.Totals.Delta = math.MaxInt64, math.MaxInt64, 0
		r.Totals.APISummary = &max
		return r
	}
	a := huge(shardReport(t, "48213", "UTC", "2026-10-01", "2026-10-04"), 0)
	b := shardReport(t, "48213", "UTC", "2026-10-05", "2026-10-07")
	_, err := Merge([]Report{a, b}, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	if err == nil || !strings.Contains(err.Error(), "day 2026-10-01") {
		t.Errorf("err = %v, want the shard refused at 2026-10-01", err)
	}
}

// The merged totals sum the days: an unverifiable day (out of range in a
// day that has no delta) is left out of them, and they never wrap.
func TestMergeTotalsAreTheSumOfTheDays(t *testing.T) {
	a := shardReport(t, "48213", "UTC", "2026-10-01", "2026-10-04")
	b := shardReport(t, "48213", "UTC", "2026-10-05", "2026-10-07")
	got, err := Merge([]Report{a, b}, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	var want Totals
	for _, d := range got.Days {
		if d.Status != "unverifiable" {
			want.API += *d.API
			want.Local += *d.Local
		}
	}
	want.Delta = want.Local - want.API
	if diff := cmp.Diff(want, got.Totals, cmpopts.IgnoreFields(Totals{}, "APISummary")); diff != "" {
		t.Errorf("totals (-sum of the days +got):\n%s", diff)
	}
	if want.API != a.Totals.API+b.Totals.API || want.Local != a.Totals.Local+b.Totals.Local {
		t.Errorf("merged totals %+v are not the shards' %+v + %+v", got.Totals, a.Totals, b.Totals)
	}
}

// A shard that verified no day has null totals: merged, it adds nothing
// to the others' totals, and totals stay null only when no shard verified
// a day. Through report.json and back, as merge reads shards.
func TestMergeUnknownTotals(t *testing.T) {
	unread := func(from, to string) Report {
		w := reconcile.Window{From: date(from), To: date(to), Loc: time.UTC}
		local := map[reconcile.Date]reconcile.Reading{}
		for _, d := range w.Days() {
			local[d] = reconcile.Unknown(errCannotRead)
		}
		res := reconcile.Compare(reconcile.Input{Window: w, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
			API: map[reconcile.Date]reconcile.Reading{}, Local: local})
		r := New(res, w, Meta{RunKey: RunKey("w", w, "store"), WorkspaceID: "w", StoreID: StoreID("store"), Drilldown: Drilldown{Mode: DrillNone}})
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Report
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		return back
	}
	a, b := unread("2026-10-01", "2026-10-02"), unread("2026-10-03", "2026-10-04")
	if !a.Totals.Unknown {
		t.Fatalf("a shard that read no day: totals %+v, want unknown", a.Totals)
	}
	m, err := Merge([]Report{a, b}, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Totals.Unknown {
		t.Errorf("no shard read a day: merged totals %+v, want unknown", m.Totals)
	}
	known := shardReport(t, "w", "UTC", "2026-10-05", "2026-10-06")
	known.StoreID, known.WorkspaceID = a.StoreID, a.WorkspaceID
	m, err = Merge([]Report{a, b, known}, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if m.Totals.Unknown || m.Totals.API != known.Totals.API || m.Totals.Local != known.Totals.Local {
		t.Errorf("merged totals %+v, want the known shard's %+v", m.Totals, known.Totals)
	}
}
