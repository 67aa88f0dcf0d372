package reconcile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRevise(t *testing.T) {
	t.Parallel()
	d24 := date("2026-11-24")
	n := func(v int64) *int64 { return &v }
	earlier := map[Date]Recorded{
		d24:            {Clicks: 1710, RunKey: "k1", At: "2026-11-25T03:00:12Z"},
		d24.AddDays(1): {Clicks: 1205, RunKey: "k1", At: "2026-11-25T03:00:12Z"},
		d24.AddDays(2): {Clicks: 1000, RunKey: "k1", At: "2026-11-25T03:00:12Z"},
		d24.AddDays(3): {Clicks: 1000, RunKey: "k1", At: "2026-11-25T03:00:12Z"},
	}
	for _, tt := range []struct {
		name string
		day  DayResult
		want []Finding
	}{
		{"unchanged_count", DayResult{Date: d24, API: n(1710), Settled: true}, nil},
		{"revised_down", DayResult{Date: d24.AddDays(1), API: n(1200), Settled: true}, []Finding{{Kind: FindingAPIRevised,
			Message: "Elido's count for 2026-11-25 changed from 1,205 to 1,200 clicks (-5) since run k1 at 2026-11-25T03:00:12Z: the provider revised it after the day had settled"}}},
		{"revised_up_past_a_thousand", DayResult{Date: d24.AddDays(2), API: n(1234567), Settled: true}, []Finding{{Kind: FindingAPIRevised,
			Message: "Elido's count for 2026-11-26 changed from 1,000 to 1,234,567 clicks (+1,233,567) since run k1 at 2026-11-25T03:00:12Z: the provider revised it after the day had settled"}}},
		{"not_settled_is_late_data", DayResult{Date: d24.AddDays(3), API: n(1500)}, nil},
		{"elido_not_read", DayResult{Date: d24.AddDays(3), Settled: true}, nil},
		{"never_recorded", DayResult{Date: d24.AddDays(9), API: n(5), Settled: true}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Revise(Result{Days: []DayResult{tt.day}}, earlier)
			if diff := cmp.Diff(tt.want, got.Findings); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
