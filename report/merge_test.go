package report

import (
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Merge(tt.shards, time.Now()); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
