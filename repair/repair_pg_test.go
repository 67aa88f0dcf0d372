package repair_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/repair"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

const testKey = "sk_test_repair_5e6f"

var (
	day1 = mustDate("2026-10-24")
	day2 = mustDate("2026-10-25")
)

func mustDate(s string) reconcile.Date {
	d, err := reconcile.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func hourOf(d reconcile.Date, h int) time.Time {
	start, _ := d.Bounds(time.UTC)
	return start.Add(time.Duration(h) * time.Hour)
}

// background is 5 clicks in every hour of day, over three links and three
// countries (one unknown).
func background(d reconcile.Date) []elidotest.Click {
	var out []elidotest.Click
	countries := []string{"PL", "DE", ""}
	for h := range 24 {
		for i := range 5 {
			out = append(out, elidotest.Click{
				TS:          hourOf(d, h).Add(time.Duration(i)*7*time.Minute + 123*time.Millisecond),
				LinkID:      fmt.Sprintf("lnk_%d", i%3),
				CountryCode: countries[(h+i)%3],
			})
		}
	}
	return out
}

// burst is n clicks of one link, 10ms apart, from start.
func burst(start time.Time, n int, link string) []elidotest.Click {
	out := make([]elidotest.Click, n)
	for i := range out {
		out[i] = elidotest.Click{TS: start.Add(time.Duration(i) * 10 * time.Millisecond), LinkID: link, CountryCode: "PL"}
	}
	return out
}

func (w world) options(days ...reconcile.Date) repair.Options {
	return repair.Options{
		Window: reconcile.Window{From: days[0], To: days[len(days)-1], Loc: time.UTC},
		Settle: 2 * time.Hour,
		Now:    hourOf(days[len(days)-1], 48),
		Query:  w.query,
	}
}

// multiset is clicks as rows returns them.
func multiset(clicks []elidotest.Click, d reconcile.Date) []string {
	start, end := d.Bounds(time.UTC)
	var out []string
	for _, c := range clicks {
		if !c.TS.Before(start) && c.TS.Before(end) {
			out = append(out, fmt.Sprintf("%s|%s|%s", c.TS.UTC().Format(time.RFC3339Nano), c.LinkID, c.CountryCode))
		}
	}
	slices.Sort(out)
	return out
}

func without(all []elidotest.Click, lost ...[]elidotest.Click) []elidotest.Click {
	drop := map[elidotest.Click]int{}
	for _, l := range lost {
		for _, c := range l {
			drop[c]++
		}
	}
	var out []elidotest.Click
	for _, c := range all {
		if drop[c] > 0 {
			drop[c]--
			continue
		}
		out = append(out, c)
	}
	return out
}

func cat(parts ...[]elidotest.Click) []elidotest.Click { return slices.Concat(parts...) }

func TestLostBurstAndLostPageRestoredExactly(t *testing.T) {
	lostBurst := burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
	page := burst(hourOf(day1, 5), 2500, "lnk_page") // 25s of clicks, 3 pages of clicks/recent
	lostPage := page[1000:2000]
	elidoClicks := cat(background(day1), lostBurst, page)
	w := newWorld(t, elidoClicks, without(elidoClicks, lostBurst, lostPage))
	o := w.options(day1)

	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || len(plans[0].Hours) != 2 {
		t.Fatalf("plans = %+v, want one day with two hours that differ", plans)
	}
	if got := len(plans[0].Add()); got != 1060 {
		t.Errorf("plan adds %d clicks, want 1060", got)
	}
	if n := w.srv.Requests()["clicks/recent"]; n != 2*(1+3) {
		t.Errorf("clicks/recent was asked %d times, want 8 (one page for the burst's hour, three for the page's, each read twice)", n)
	}
	res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil)
	if len(res) != 1 || res[0].Err != nil || res[0].Inserted != 1060 || !res[0].Matches() {
		t.Fatalf("Apply = %+v, want 1060 inserted and a match", res)
	}
	if diff := gocmp.Diff(multiset(elidoClicks, day1), w.rows(t, day1)); diff != "" {
		t.Errorf("the store's clicks differ from Elido's after the repair (-elido +store):\n%s", diff)
	}
	if got, want := repair.DescribeResult(plans[0], res[0], time.UTC), "restored 1060 clicks on 2026-10-24, 02:00 UTC–03:00 UTC, 05:00 UTC–06:00 UTC; the day now matches"; got != want {
		t.Errorf("DescribeResult = %q, want %q", got, want)
	}

	// A second repair finds nothing to do and inserts nothing.
	again, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	if res := repair.Apply(t.Context(), w.w, w.st, o, again, nil, nil); len(res) != 0 || len(again[0].Add()) != 0 {
		t.Errorf("second repair: plan %+v, applied %+v; want nothing", again, res)
	}
	if got := len(w.rows(t, day1)); got != len(multiset(elidoClicks, day1)) {
		t.Errorf("after a second repair the store has %d clicks, want %d", got, len(multiset(elidoClicks, day1)))
	}
}

func TestDuplicatedBatchIsSurplusAndUntouched(t *testing.T) {
	lostBurst := burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
	dup := background(day1)[40:50] // hours 8 and 9, delivered twice
	elidoClicks := cat(background(day1), lostBurst)
	stored := cat(without(elidoClicks, lostBurst), dup)
	w := newWorld(t, elidoClicks, stored)
	o := w.options(day1)

	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	var surplus int
	for _, h := range plans[0].Hours {
		surplus += len(h.Surplus)
	}
	if surplus != 10 || len(plans[0].Add()) != 60 {
		t.Fatalf("plan: %d to add, %d surplus; want 60 and 10", len(plans[0].Add()), surplus)
	}
	res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil)
	if len(res) != 1 || res[0].Err != nil || res[0].Inserted != 60 {
		t.Fatalf("Apply = %+v", res)
	}
	if res[0].Matches() || res[0].After != res[0].API+10 {
		t.Errorf("after the repair the store has %d, Elido %d: want the 10 surplus rows kept", res[0].After, res[0].API)
	}
	if diff := gocmp.Diff(multiset(cat(elidoClicks, dup), day1), w.rows(t, day1)); diff != "" {
		t.Errorf("store (-want +got):\n%s", diff)
	}
}

func TestHourBeyondReachRefusedNothingWritten(t *testing.T) {
	lostBurst := burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
	elidoClicks := cat(background(day1), lostBurst)
	w := newWorld(t, elidoClicks, without(elidoClicks, lostBurst))
	w.srv.SetReach(hourOf(day1, 2).Add(20 * time.Minute)) // the hour's first 20 minutes are out of reach
	o := w.options(day1)
	before := w.rows(t, day1)

	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans[0].Hours) != 1 || !strings.Contains(plans[0].Hours[0].Refused, "clicks/recent gave 2 clicks for this hour, Elido counts 65") {
		t.Fatalf("plan %+v: want the 02:00 hour refused for an incomplete source", plans[0].Hours)
	}
	// The day stays short of Elido whatever else is read: its other
	// hours are not read (two reads of the one hour).
	if n := w.srv.Requests()["clicks/recent"]; n != 2 {
		t.Errorf("%d clicks/recent requests, want the refused hour's 2 only", n)
	}
	lines := repair.Describe(plans[0], time.UTC)
	if len(lines) != 1 || !lines[0].Refused || !strings.HasPrefix(lines[0].Text, "not repaired: 2026-10-24, 02:00 UTC–03:00 UTC: clicks/recent gave 2") {
		t.Errorf("Describe = %q", lines)
	}
	if res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil); len(res) != 0 {
		t.Errorf("Apply = %+v, want nothing applied", res)
	}
	if diff := gocmp.Diff(before, w.rows(t, day1)); diff != "" {
		t.Errorf("the store changed (-before +after):\n%s", diff)
	}
}

func TestInterruptLeavesNoHalfRepairedDay(t *testing.T) {
	lost1 := burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
	lost2 := burst(hourOf(day2, 4), 80, "lnk_burst")
	elidoClicks := cat(background(day1), background(day2), lost1, lost2)
	w := newWorld(t, elidoClicks, without(elidoClicks, lost1, lost2))
	o := w.options(day1, day2)
	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	before2 := w.rows(t, day2)

	// SIGTERM arrives while the second day's rows are being inserted.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res := repair.Apply(ctx, w.w, w.st, o, plans, nil, func(d reconcile.Date, n int) {
		if d == day2 && n == 40 {
			cancel()
		}
	})
	if len(res) != 2 {
		t.Fatalf("Apply = %+v, want two days", res)
	}
	if res[0].Err != nil || res[0].Inserted != 60 || !res[0].Matches() {
		t.Errorf("day 1: %+v, want repaired whole", res[0])
	}
	if res[1].Err == nil || !errors.Is(res[1].Err, context.Canceled) || res[1].Inserted != 0 {
		t.Errorf("day 2: %+v, want stopped with nothing written", res[1])
	}
	if diff := gocmp.Diff(multiset(elidoClicks, day1), w.rows(t, day1)); diff != "" {
		t.Errorf("day 1 is not whole (-elido +store):\n%s", diff)
	}
	if diff := gocmp.Diff(before2, w.rows(t, day2)); diff != "" {
		t.Errorf("day 2 is half repaired (-before +after):\n%s", diff)
	}
}

func TestStoreChangedSincePlanAbortsTheDay(t *testing.T) {
	lost := burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
	elidoClicks := cat(background(day1), lost)
	w := newWorld(t, elidoClicks, without(elidoClicks, lost))
	o := w.options(day1)
	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	// The poller catches up between the plan and the apply.
	insertRows(t, w.db, lost[:5])
	before := w.rows(t, day1)
	res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil)
	if len(res) != 1 || !errors.Is(res[0].Err, store.ErrChanged) || res[0].Inserted != 0 {
		t.Fatalf("Apply = %+v, want the day aborted with ErrChanged", res)
	}
	if diff := gocmp.Diff(before, w.rows(t, day1)); diff != "" {
		t.Errorf("the store changed (-before +after):\n%s", diff)
	}
}

func TestRepairSQLRunsAndKeepsHostileIDs(t *testing.T) {
	hostile := []elidotest.Click{
		{TS: hourOf(day1, 3).Add(time.Millisecond), LinkID: `x'); DROP TABLE clicks; --`, CountryCode: "PL"},
		{TS: hourOf(day1, 3).Add(2 * time.Millisecond), LinkID: `back\slash'`, CountryCode: ""},
	}
	elidoClicks := cat(background(day1), hostile)
	w := newWorld(t, elidoClicks, background(day1))
	plans, err := repair.Plan(t.Context(), w.api, w.st, w.options(day1))
	if err != nil {
		t.Fatal(err)
	}
	var sql strings.Builder
	if err := repair.WriteSQL(&sql, plans, dsn.Postgres); err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.Exec(sql.String()); err != nil {
		t.Fatalf("repair.sql does not run: %v\n%s", err, sql.String())
	}
	if diff := gocmp.Diff(multiset(elidoClicks, day1), w.rows(t, day1)); diff != "" {
		t.Errorf("after repair.sql (-elido +store):\n%s", diff)
	}
}

// A ts column of type timestamp (without time zone) that holds New York
// wall-clock times is read and written in STORE_TIMESTAMP_TZ: the lost
// burst is restored click for click, and no click the store has is
// inserted again under a shifted hour.
func TestTimestampColumnInLocalZoneRestoredExactly(t *testing.T) {
	const zone = "America/New_York"
	ny, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	lostBurst := burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
	elidoClicks := cat(background(day1), lostBurst)
	w := newWorld(t, elidoClicks, nil)
	if _, err := w.db.Exec("ALTER TABLE clicks ALTER COLUMN ts TYPE timestamp USING ts AT TIME ZONE '" + zone + "'"); err != nil {
		t.Fatal(err)
	}
	for _, c := range without(elidoClicks, lostBurst) {
		if _, err := w.db.Exec("INSERT INTO clicks (ts, link_id, country_code) VALUES ($1::timestamptz AT TIME ZONE '"+zone+"', $2, nullif($3, ''))", c.TS, c.LinkID, c.CountryCode); err != nil {
			t.Fatal(err)
		}
	}
	so := store.Options{TimestampZone: ny}
	st, err := store.Open(t.Context(), dbtest.Parsed(t, store.ParseDSN, w.dsn), so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	wr, err := store.OpenWriter(t.Context(), dbtest.Parsed(t, store.ParseWriteDSN, w.dsn), "", so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wr.Close() })
	o := w.options(day1)

	plans, err := repair.Plan(t.Context(), w.api, st, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(plans[0].Add()); got != len(lostBurst) {
		t.Fatalf("plan adds %d clicks, want the %d of the lost burst: %+v", got, len(lostBurst), plans)
	}
	res := repair.Apply(t.Context(), wr, st, o, plans, nil, nil)
	if len(res) != 1 || res[0].Err != nil || res[0].Inserted != len(lostBurst) || !res[0].Matches() {
		t.Fatalf("Apply = %+v, want %d inserted and a match", res, len(lostBurst))
	}
	got := pgRows(t, w.db, day1, "(ts AT TIME ZONE '"+zone+"')")
	if diff := gocmp.Diff(multiset(elidoClicks, day1), got); diff != "" {
		t.Errorf("the store's clicks, read as New York times, differ from Elido's (-elido +store):\n%s", diff)
	}
}

// A click lost beside a duplicate in the same hour leaves that hour's
// count as Elido's: the repair reads it because the store holds a row
// twice there, even on a day where no hour it reads for its count shows a
// row Elido does not count (the 02:00 hour lost clicks and nothing else).
func TestPlanReadsAnHourWhoseCountADuplicateHides(t *testing.T) {
	lost := burst(hourOf(day1, 2).Add(17*time.Minute), 3, "lnk_burst")
	hidden := elidotest.Click{TS: hourOf(day1, 7).Add(5 * time.Minute), LinkID: "lnk_hidden", CountryCode: "PL"}
	twin := elidotest.Click{TS: hourOf(day1, 7).Add(9 * time.Minute), LinkID: "lnk_twin", CountryCode: "PL"}
	elidoClicks := cat(background(day1), lost, []elidotest.Click{hidden, twin})
	stored := cat(without(elidoClicks, lost, []elidotest.Click{hidden}), []elidotest.Click{twin})
	w := newWorld(t, elidoClicks, stored)
	got, surplus := plannedLinks(w.plan(t, w.options(day1))[0])
	want := []string{"lnk_burst", "lnk_burst", "lnk_burst", "lnk_hidden"}
	if !slices.Equal(got, want) {
		t.Errorf("clicks to add %v, want %v: the lost click beside the duplicate is put back too", got, want)
	}
	if !slices.Equal(surplus, []string{"lnk_twin"}) {
		t.Errorf("surplus %v, want the duplicate listed", surplus)
	}
}

// plannedLinks returns the links of the clicks p puts back and of the
// surplus rows it lists, oldest first.
func plannedLinks(p repair.DayPlan) (add, surplus []string) {
	for _, c := range p.Add() {
		add = append(add, c.LinkID)
	}
	for _, h := range p.Hours {
		for _, c := range h.Surplus {
			surplus = append(surplus, c.LinkID)
		}
	}
	return add, surplus
}

// A click lost beside a row Elido does not count (a click it revised
// away), in the same hour, leaves that hour's count as Elido's and no row
// repeated: only the day's per-link and per-country counts show it. The
// repair reads every hour of such a day, and puts the click back (seed
// 1013 of the simulation, 88 nights, bot, MariaDB); it does so too when a
// breakdown cannot be read, which then rules nothing out.
func TestPlanReadsAnHourWhoseCountARevisedClickHides(t *testing.T) {
	for _, tt := range []struct {
		name    string
		country string // the revised click's, beside the lost one from PL
		fault   *elidotest.Fault
	}{
		{"another_link_and_country", "DE", nil},
		{"another_link_its_breakdown_unread", "PL", &elidotest.Fault{Kind: elidotest.NotFound, Endpoint: "breakdown/link"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lost := burst(hourOf(day1, 2).Add(17*time.Minute), 3, "lnk_burst")
			hidden := elidotest.Click{TS: hourOf(day1, 7).Add(5 * time.Minute), LinkID: "lnk_hidden", CountryCode: "PL"}
			revised := elidotest.Click{TS: hourOf(day1, 7).Add(9 * time.Minute), LinkID: "lnk_revised", CountryCode: tt.country}
			elidoClicks := cat(background(day1), lost, []elidotest.Click{hidden})
			stored := cat(without(elidoClicks, lost, []elidotest.Click{hidden}), []elidotest.Click{revised})
			w := newWorld(t, elidoClicks, stored)
			if tt.fault != nil {
				w.srv.SetFaults(*tt.fault)
			}
			got, surplus := plannedLinks(w.plan(t, w.options(day1))[0])
			want := []string{"lnk_burst", "lnk_burst", "lnk_burst", "lnk_hidden"}
			if !slices.Equal(got, want) {
				t.Errorf("clicks to add %v, want %v: the lost click beside the revised one is put back too", got, want)
			}
			if !slices.Equal(surplus, []string{"lnk_revised"}) {
				t.Errorf("surplus %v, want the revised click listed, and kept", surplus)
			}
		})
	}
}
