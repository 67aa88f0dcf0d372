package repair

import (
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/reconcile"
)

func TestDescribeMarksRefusedHours(t *testing.T) {
	day := reconcile.Date{Year: 2026, Month: time.October, Day: 24}
	from := time.Date(2026, 10, 24, 2, 0, 0, 0, time.UTC)
	hour := Hour{From: from, To: from.Add(time.Hour), API: 2, Store: 1}
	click := Click{TS: from.Add(time.Minute), LinkID: "lnk_a"}
	later := hour
	later.From, later.To = from.Add(time.Hour), from.Add(2*time.Hour)
	p := DayPlan{Day: day, Hours: []HourPlan{
		{Hour: hour, Add: []Click{click}},
		{Hour: later, Refused: "the store changed while it was read"},
	}}
	want := []Line{
		{Text: "1 click to restore on 2026-10-24, 02:00 UTC–03:00 UTC"},
		{Text: "not repaired: 2026-10-24, 03:00 UTC–04:00 UTC: the store changed while it was read", Refused: true},
	}
	if diff := gocmp.Diff(want, Describe(p, time.UTC)); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
	p.Skipped = "not settled yet"
	if got := Describe(p, time.UTC); got != nil {
		t.Errorf("Describe of a skipped day = %q, want nothing", got)
	}
}
