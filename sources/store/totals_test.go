package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/reconcile"
)

// knownTotals returns the readings of days from a map of clicks by date.
func knownTotals(t *testing.T, clicks map[string]int64) map[reconcile.Date]reconcile.Reading {
	t.Helper()
	want := map[reconcile.Date]reconcile.Reading{}
	for d, n := range clicks {
		want[mustDate(t, d)] = reconcile.Known(n)
	}
	return want
}

// daysAround returns the day before day, day and the day after.
func daysAround(t *testing.T, day string) []reconcile.Date {
	d := mustDate(t, day)
	return []reconcile.Date{d.AddDays(-1), d, d.AddDays(1)}
}

// The main pass reads each day's total, and it is the day's per-link sum,
// whichever way the total is read.
func TestTotalsEvents(t *testing.T) {
	events := mustQuery(t)(PresetQuery(PresetEvents))
	for _, b := range backends() {
		custom := mustQuery(t)(CustomQuery(b.eventsCustom))
		customTotal := mustQuery(t)(custom.WithTotal("SELECT count(*) AS clicks FROM clicks WHERE " + b.inDay))
		t.Run(b.name, func(t *testing.T) {
			for _, tt := range eventCases {
				t.Run(tt.name, func(t *testing.T) {
					db, dsn := b.new(t)
					insertClicks(t, db, tt.clicks)
					s := openStore(t, dsn)
					loc := mustZone(t, tt.tz)
					days := daysAround(t, tt.day)
					want := map[reconcile.Date]reconcile.Reading{}
					for _, d := range days {
						dc, err := s.Counts(t.Context(), events, d, loc)
						if err != nil {
							t.Fatal(err)
						}
						want[d] = reconcile.Known(dc.Total)
					}
					if got := want[mustDate(t, tt.day)].Clicks; got != total(tt.want) {
						t.Fatalf("Counts total %d, want %d", got, total(tt.want))
					}
					for name, q := range map[string]Query{"events": events, "custom_summed": custom, "custom_total": customTotal} {
						got, err := s.Totals(t.Context(), q, days, loc)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if diff := cmp.Diff(want, got); diff != "" {
							t.Errorf("%s: Totals mismatch (-want +got):\n%s", name, diff)
						}
					}
				})
			}
		})
	}
}

func TestTotalsDaily(t *testing.T) {
	daily := mustQuery(t)(PresetQuery(PresetDaily))
	counters := []counter{
		{day: "2026-11-25", link: "a", clicks: 9},
		{day: "2026-11-26", link: "a", clicks: 5},
		{day: "2026-11-26", link: "b", clicks: 0},
		{day: "2026-11-26", link: "c", clicks: 1 << 40},
		{day: "2026-11-27", link: "a", clicks: 4},
	}
	want := knownTotals(t, map[string]int64{"2026-11-24": 0, "2026-11-25": 9, "2026-11-26": 5 + 1<<40, "2026-11-27": 4, "2026-11-28": 0})
	days := []reconcile.Date{mustDate(t, "2026-11-24"), mustDate(t, "2026-11-25"), mustDate(t, "2026-11-26"), mustDate(t, "2026-11-27"), mustDate(t, "2026-11-28")}
	for _, b := range backends() {
		custom := mustQuery(t)(CustomQuery(b.dailyCustom))
		customTotal := mustQuery(t)(custom.WithTotal(strings.Replace(b.dailyCustom, "link_id, clicks", "coalesce(sum(clicks), 0) AS clicks", 1)))
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			insertCounters(t, db, counters)
			s := openStore(t, dsn)
			for name, q := range map[string]Query{"daily": daily, "custom_summed": custom, "custom_total": customTotal} {
				got, err := s.Totals(t.Context(), q, days, mustZone(t, "Pacific/Kiritimati"))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: Totals mismatch (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// A long window is read day by day, each day on its own.
func TestTotalsManyDays(t *testing.T) {
	events := mustQuery(t)(PresetQuery(PresetEvents))
	daily := mustQuery(t)(PresetQuery(PresetDaily))
	warsaw := mustZone(t, "Europe/Warsaw")
	first := mustDate(t, "2026-01-01")
	var days []reconcile.Date
	var clicks []click
	var counters []counter
	want := map[reconcile.Date]reconcile.Reading{}
	for i := 0; i < 217; i++ {
		d := first.AddDays(i)
		days = append(days, d)
		n := int64(i % 7)
		start, end := d.Bounds(warsaw)
		for k := int64(0); k < n; k++ {
			clicks = append(clicks, click{ts: start.Add(time.Duration(k) * time.Hour).Format("2006-01-02T15:04:05.000Z07:00"), link: "a"})
		}
		if n > 0 { // the day's last millisecond
			clicks[len(clicks)-1].ts = end.Add(-time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00")
		}
		counters = append(counters, counter{day: d.String(), link: "a", clicks: n * 10})
		want[d] = reconcile.Known(n)
	}
	wantDaily := map[reconcile.Date]reconcile.Reading{}
	for d, r := range want {
		wantDaily[d] = reconcile.Known(r.Clicks * 10)
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			insertClicks(t, db, clicks)
			insertCounters(t, db, counters)
			s := openStore(t, dsn)
			got, err := s.Totals(t.Context(), events, days, warsaw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events: Totals mismatch (-want +got):\n%s", diff)
			}
			got, err = s.Totals(t.Context(), daily, days, warsaw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantDaily, got); diff != "" {
				t.Errorf("daily: Totals mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A total query that does not return one whole number makes every day
// unknown, with an error a retry cannot mend.
func TestTotalsBadTotalQuery(t *testing.T) {
	tests := []struct {
		name  string
		total string
		want  string
	}{
		{"no_row", "SELECT count(*) AS clicks FROM clicks WHERE 1 = 0 GROUP BY link_id", "returned no row"},
		{"two_rows", "SELECT count(*) AS clicks FROM clicks GROUP BY link_id", "more than one row"},
		{"two_columns", "SELECT count(*) AS clicks, 1 AS other FROM clicks", "one column"},
		{"null", "SELECT NULL AS clicks", "NULL"},
		{"negative", "SELECT -1 AS clicks", "negative"},
		{"int64_max", "SELECT 9223372036854775807 AS clicks", "more clicks than"},
		{"no_such_table", "SELECT count(*) AS clicks FROM no_such_table", "no_such_table"},
	}
	days := daysAround(t, "2026-11-26")
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			insertClicks(t, db, []click{{ts: "2026-11-26T10:00:00.000Z", link: "a"}, {ts: "2026-11-26T11:00:00.000Z", link: "b"}})
			s := openStore(t, dsn)
			custom := mustQuery(t)(CustomQuery(b.eventsCustom))
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					q := mustQuery(t)(custom.WithTotal(tt.total))
					got, err := s.Totals(t.Context(), q, days, time.UTC)
					if !errors.Is(err, ErrBadQuery) {
						t.Errorf("error %v, want ErrBadQuery", err)
					}
					if len(got) != len(days) {
						t.Fatalf("Totals gave %d days, want %d", len(got), len(days))
					}
					for _, d := range days {
						if r := got[d]; r.Err == nil || !errors.Is(r.Err, ErrBadQuery) || !strings.Contains(r.Err.Error(), tt.want) || !strings.Contains(r.Err.Error(), d.String()) {
							t.Errorf("day %s: %+v, want an ErrBadQuery naming the day and containing %q", d, r, tt.want)
						}
					}
				})
			}
		})
	}
}

// A query that fails on one day costs that day only, although PostgreSQL
// ends the transaction it failed in.
func TestTotalsOneDayFails(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			insertClicks(t, db, []click{{ts: "2026-11-25T10:00:00.000Z", link: "a"}, {ts: "2026-11-27T10:00:00.000Z", link: "a"}, {ts: "2026-11-27T11:00:00.000Z", link: "a"}})
			s := openStore(t, dsn)
			custom := mustQuery(t)(CustomQuery(b.eventsCustom))
			// Division by zero on 2026-11-26 only.
			total := "SELECT count(*) / (CASE WHEN :day = '2026-11-26' THEN 0 ELSE 1 END) AS clicks FROM clicks WHERE " + b.inDay
			q := mustQuery(t)(custom.WithTotal(total))
			days := daysAround(t, "2026-11-26")
			got, err := s.Totals(t.Context(), q, days, time.UTC)
			if b.dialect.String() == "sqlite" || b.dialect.String() == "mysql" {
				// SQLite's integer division by zero is NULL, and so is
				// MySQL's in a SELECT.
				errorContains(t, err, "NULL")
			} else if !errors.Is(err, ErrBadQuery) {
				t.Errorf("error %v, want ErrBadQuery", err)
			}
			if got[days[1]].Err == nil {
				t.Errorf("2026-11-26: %+v, want an error", got[days[1]])
			}
			for _, d := range []reconcile.Date{days[0], days[2]} {
				want := reconcile.Known(map[bool]int64{true: 1, false: 2}[d == days[0]])
				if diff := cmp.Diff(want, got[d]); diff != "" {
					t.Errorf("%s mismatch (-want +got):\n%s", d, diff)
				}
			}
		})
	}
}

// Rows whose time cannot be read make every day unknown.
func TestTotalsUnreadableTimes(t *testing.T) {
	db, dsn := newLooseSQLite(t)
	db.MustExec(`INSERT INTO clicks (ts, link_id) VALUES ('2026-11-26T10:00:00Z', 'a'), (1795910398, 'a'), ('garbage', 'b')`)
	s := openStore(t, dsn)
	days := daysAround(t, "2026-11-26")
	got, err := s.Totals(t.Context(), mustQuery(t)(PresetQuery(PresetEvents)), days, time.UTC)
	var ue *UnreadableError
	if !errors.As(err, &ue) || ue.Rows != 2 {
		t.Fatalf("error %v, want 2 unreadable rows", err)
	}
	for _, d := range days {
		if !errors.As(got[d].Err, &ue) {
			t.Errorf("day %s: %+v, want an UnreadableError", d, got[d])
		}
	}
}

func TestTotalsWithoutQueryOrZone(t *testing.T) {
	_, dsn := newSQLite(t)
	s := openStore(t, dsn)
	days := daysAround(t, "2026-11-26")
	got, err := s.Totals(t.Context(), Query{}, days, time.UTC)
	errorContains(t, err, "PresetQuery")
	if len(got) != 3 || got[days[0]].Err == nil {
		t.Errorf("Totals without a query: %v, want every day unknown", got)
	}
	_, err = s.Totals(t.Context(), mustQuery(t)(PresetQuery(PresetEvents)), days, nil)
	errorContains(t, err, "no time zone")
	if _, err := mustQuery(t)(PresetQuery(PresetEvents)).WithTotal(" "); err == nil {
		t.Error("WithTotal of an empty query succeeded")
	}
	if _, err := mustQuery(t)(PresetQuery(PresetEvents)).WithTotal("SELECT :since AS clicks"); err == nil || !strings.Contains(err.Error(), ":since") {
		t.Errorf("WithTotal with an unknown parameter: %v", err)
	}
}

// A total read fails fast when its context ends.
func TestTotalsCancelled(t *testing.T) {
	_, dsn := newSQLite(t)
	s := openStore(t, dsn)
	ctx, cancel := contextCancelled(t)
	defer cancel()
	days := daysAround(t, "2026-11-26")
	got, err := s.Totals(ctx, mustQuery(t)(PresetQuery(PresetDaily)), days, time.UTC)
	if err == nil {
		t.Fatal("Totals on a cancelled context succeeded")
	}
	for _, d := range days {
		if got[d].Err == nil {
			t.Errorf("day %s: %+v, want unknown", d, got[d])
		}
	}
}

func contextCancelled(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx, cancel
}

// The daily preset reads a run of days in one statement; it must give each
// day exactly what the per-day total gives: 0 for a day without counters,
// nothing from the days just outside the run, the days of a DST change
// like any other (a counter's day is a date, not a span of time), and a
// day whose sum is not believable unknown on its own.
func TestTotalsDailyChunk(t *testing.T) {
	daily := mustQuery(t)(PresetQuery(PresetDaily))
	// 2026-03-29 and 2026-10-25 are Warsaw's DST changes; 2026-03-01
	// follows a February without a 29th.
	first, last := mustDate(t, "2026-02-26"), mustDate(t, "2026-03-30")
	counters := []counter{
		{day: "2026-02-25", link: "a", clicks: 1000}, // the day before the run
		{day: "2026-02-26", link: "a", clicks: 3},
		{day: "2026-02-26", link: "b", clicks: 4},
		{day: "2026-02-28", link: "a", clicks: 0},
		{day: "2026-03-01", link: "a", clicks: 1 << 40},
		{day: "2026-03-01", link: "b", clicks: 1},
		{day: "2026-03-15", link: "a", clicks: MaxClicks},
		{day: "2026-03-15", link: "b", clicks: 1}, // the sum is one too many
		{day: "2026-03-29", link: "a", clicks: 23},
		{day: "2026-03-30", link: "c", clicks: 7},
		{day: "2026-03-31", link: "a", clicks: 1000}, // the day after
		{day: "2026-10-25", link: "a", clicks: 25},
	}
	var run []reconcile.Date
	for d := first; !d.After(last); d = d.AddDays(1) {
		run = append(run, d)
	}
	want := knownTotals(t, map[string]int64{
		"2026-02-26": 7, "2026-03-01": 1<<40 + 1, "2026-03-29": 23, "2026-03-30": 7,
	})
	for _, d := range run {
		if _, ok := want[d]; !ok && d.String() != "2026-03-15" {
			want[d] = reconcile.Known(0)
		}
	}
	tests := []struct {
		name string
		days []reconcile.Date
		want map[reconcile.Date]reconcile.Reading
	}{
		{name: "run_of_33_days", days: run, want: want},
		{name: "one_day", days: []reconcile.Date{mustDate(t, "2026-03-29")}, want: knownTotals(t, map[string]int64{"2026-03-29": 23})},
		{name: "autumn_dst_day_and_neighbours", days: daysAround(t, "2026-10-25"), want: knownTotals(t, map[string]int64{"2026-10-24": 0, "2026-10-25": 25, "2026-10-26": 0})},
		{
			name: "days_with_gaps_read_one_by_one",
			days: []reconcile.Date{mustDate(t, "2026-02-25"), mustDate(t, "2026-03-01"), mustDate(t, "2026-03-31")},
			want: knownTotals(t, map[string]int64{"2026-02-25": 1000, "2026-03-01": 1<<40 + 1, "2026-03-31": 1000}),
		},
	}
	if consecutive(tests[3].days) {
		t.Fatal("days_with_gaps: the days are consecutive")
	}
	for _, b := range backends() {
		custom := mustQuery(t)(CustomQuery(b.dailyCustom))
		perDay := mustQuery(t)(custom.WithTotal(strings.Replace(b.dailyCustom, "link_id, clicks", "coalesce(sum(clicks), 0) AS clicks", 1)))
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.new(t)
			insertCounters(t, db, counters)
			s := openStore(t, dsn)
			warsaw := mustZone(t, "Europe/Warsaw")
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					got, err := s.Totals(t.Context(), daily, tt.days, warsaw)
					each, eachErr := s.Totals(t.Context(), perDay, tt.days, warsaw)
					bad := mustDate(t, "2026-03-15")
					if _, ok := got[bad]; ok {
						// The unbelievable day: unknown, in both paths, and
						// the first error; the other days are still read.
						for name, r := range map[string]reconcile.Reading{"chunk": got[bad], "per_day": each[bad]} {
							if !errors.Is(r.Err, ErrBadQuery) || !strings.Contains(r.Err.Error(), "more clicks than a store can hold") {
								t.Errorf("%s: %s: %+v, want unknown, too many clicks", name, bad, r)
							}
						}
						if !errors.Is(err, ErrBadQuery) || !errors.Is(eachErr, ErrBadQuery) {
							t.Errorf("errors %v and %v, want ErrBadQuery", err, eachErr)
						}
						delete(got, bad)
						delete(each, bad)
					} else if err != nil || eachErr != nil {
						t.Fatalf("chunk: %v; per day: %v", err, eachErr)
					}
					if diff := cmp.Diff(tt.want, got); diff != "" {
						t.Errorf("Totals mismatch (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(each, got); diff != "" {
						t.Errorf("chunk and per-day totals differ (-per day +chunk):\n%s", diff)
					}
				})
			}
		})
	}
}
