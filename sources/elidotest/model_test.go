package elidotest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// A model answers every endpoint as the same clicks given one by one do:
// totals, daily and hourly series (of the workspace and of one link),
// countries and every page of the link breakdown.
func TestModelAnswersAsItsClicks(t *testing.T) {
	first, _ := reconcile.ParseDate("2026-11-26")
	days := []reconcile.Date{first, first.AddDays(1), first.AddDays(2)}
	var links []string
	for i := range 1500 {
		links = append(links, fmt.Sprintf("lnk_%04d", i))
	}
	count := func(d reconcile.Date, i int) int64 { return int64((d.Day + i) % 4) }
	countries := []string{"PL", "DE", "US", "FR"}
	var clicks []elidotest.Click
	for _, d := range days {
		for i, id := range links {
			for range count(d, i) {
				clicks = append(clicks, elidotest.Click{TS: d.Start(time.UTC).Add(time.Duration(i%24) * time.Hour), LinkID: id, CountryCode: countries[i%4]})
			}
		}
	}
	raw := elidotest.NewServer(workspace, key, clicks)
	defer raw.Close()
	modelled := elidotest.NewServer(workspace, key, nil)
	defer modelled.Close()
	if err := modelled.SetModel(elidotest.Model{TZ: "UTC", Days: days, Links: links, Count: count}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		analytics("summary", "from=2026-11-25&to=2026-11-29&tz=UTC"),
		analytics("timeseries", "from=2026-11-25&to=2026-11-29&tz=UTC&interval=day"),
		analytics("timeseries", "from=2026-11-26&to=2026-11-28&tz=UTC&interval=day&link_id=lnk_0007"),
		analytics("timeseries", "from=2026-11-27&to=2026-11-27&tz=UTC&interval=hour"),
		analytics("breakdown/country", "from=2026-11-26&to=2026-11-27&tz=UTC"),
		analytics("breakdown/link", "from=2026-11-26&to=2026-11-28&tz=UTC&limit=1000"),
		analytics("breakdown/link", "from=2026-11-26&to=2026-11-28&tz=UTC&limit=1000&cursor=b2Zmc2V0OjEwMDA"),
	} {
		want, got := get(t, raw, key, q), get(t, modelled, key, q)
		if want.status != 200 {
			t.Fatalf("%s: status %d: %s", q, want.status, want.body)
		}
		if diff := cmp.Diff(want.json(t), got.json(t)); diff != "" {
			t.Errorf("%s (-clicks +model):\n%s", q, diff)
		}
	}
}
