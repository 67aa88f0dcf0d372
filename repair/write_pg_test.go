package repair_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/repair"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// A webhook receiver inserts one of the lost clicks at READ COMMITTED, its
// transaction still open, as the repair's day begins. The repair waits for
// it under its lock, counts the click, and refuses the day (the store
// changed); the next repair puts back the rest. Every click is in the
// store exactly once.
func TestReceiverWritingMeanwhileLeavesEveryClickOnce(t *testing.T) {
	lost := burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
	elidoClicks := cat(background(day1), lost)
	w := newWorld(t, elidoClicks, without(elidoClicks, lost))
	o := w.options(day1)
	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}

	receiver, err := w.db.BeginTxx(t.Context(), &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Rollback()
	insertRows(t, receiver, lost[10:11])

	applied := make(chan []repair.DayResult, 1)
	go func() { applied <- repair.Apply(context.Background(), w.w, w.st, o, plans, nil, nil) }()
	stop := make(chan struct{})
	defer close(stop)
	var res []repair.DayResult
	select {
	case <-lockWaiter(t, w, stop):
		if err := receiver.Commit(); err != nil {
			t.Fatal(err)
		}
		res = <-applied
	case res = <-applied:
		t.Error("the repair's day did not wait for the receiver's open insert")
		if err := receiver.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if len(res) != 1 || !errors.Is(res[0].Err, store.ErrChanged) || res[0].Inserted != 0 {
		t.Errorf("Apply = %+v; want the day refused, the store having changed", res)
	}

	again, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	if res := repair.Apply(t.Context(), w.w, w.st, o, again, nil, nil); len(res) != 1 || res[0].Inserted != 59 || !res[0].Matches() {
		t.Errorf("second repair: %+v; want the other 59 clicks and a match", res)
	}
	if diff := gocmp.Diff(multiset(elidoClicks, day1), w.rows(t, day1)); diff != "" {
		t.Errorf("the store's clicks differ from Elido's (-elido +store):\n%s", diff)
	}
}

// clicks/recent repeats, at each page boundary, the click the page before
// ended with and loses the next: the hour's count adds up. The repair
// refuses the hour (its two reads disagree) and writes nothing of it.
func TestRepeatAtPageBoundaryRefusesTheHour(t *testing.T) {
	page := burst(hourOf(day1, 5), 2500, "lnk_page")
	lost := page[1500:1510]
	elidoClicks := cat(background(day1), page)
	w := newWorld(t, elidoClicks, without(elidoClicks, lost))
	w.srv.SetFaults(elidotest.Fault{Kind: elidotest.RepeatAtPageBoundary})
	o := w.options(day1)
	before := w.rows(t, day1)

	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans[0].Hours) != 1 || !strings.Contains(plans[0].Hours[0].Refused, "read again with other page boundaries") {
		t.Fatalf("plan %+v: want the 05:00 hour refused for reads that disagree", plans[0].Hours)
	}
	if res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil); len(res) != 0 {
		t.Errorf("Apply = %+v, want nothing applied", res)
	}
	if diff := gocmp.Diff(before, w.rows(t, day1)); diff != "" {
		t.Errorf("the store changed (-before +after):\n%s", diff)
	}
}

// A click with a NUL byte in its link id (PostgreSQL text cannot hold one)
// refuses its hour in the plan, and a click the store rejects (a CHECK
// constraint) refuses its hour when written: the day's other hours are
// restored, the plan's files are written, and the lines say which hours
// and why.
func TestUnwritableClickRefusesItsHourOnly(t *testing.T) {
	lost := burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
	nul := []elidotest.Click{{TS: hourOf(day1, 5).Add(time.Minute), LinkID: "lnk\x00nul", CountryCode: "PL"}}
	rejected := []elidotest.Click{{TS: hourOf(day1, 7).Add(time.Minute), LinkID: "lnk_rejected", CountryCode: "PL"}}
	elidoClicks := cat(background(day1), lost, nul, rejected)
	w := newWorld(t, elidoClicks, background(day1))
	if _, err := w.db.Exec("ALTER TABLE clicks ADD CONSTRAINT no_rejected CHECK (link_id <> 'lnk_rejected')"); err != nil {
		t.Fatal(err)
	}
	o := w.options(day1)
	plans, err := repair.Plan(t.Context(), w.api, w.st, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repair.WritePlan(t.TempDir(), time.Now(), plans, dsn.Postgres); err != nil {
		t.Fatalf("WritePlan: %v", err)
	}
	var refused []string
	for _, l := range repair.Describe(plans[0], time.UTC) {
		if l.Refused {
			refused = append(refused, l.Text)
		}
	}
	wantRefused := []string{`not repaired: 2026-10-24, 05:00 UTC–06:00 UTC: its click at 2026-10-24T05:01:00.000Z cannot be written: its link id "lnk\x00nul" holds a NUL byte, which no SQL text can hold`}
	if diff := gocmp.Diff(wantRefused, refused); diff != "" {
		t.Errorf("Describe's refused lines (-want +got):\n%s", diff)
	}
	res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil)
	if len(res) != 1 || res[0].Err != nil || res[0].Inserted != 60 || len(res[0].Rejected) != 1 {
		t.Fatalf("Apply = %+v; want the 60 clicks of 02:00 written and the 07:00 hour rejected", res)
	}
	got := repair.DescribeResult(plans[0], res[0], time.UTC)
	want := "restored 60 clicks on 2026-10-24, 02:00 UTC–03:00 UTC; the day still differs: the store has 180, Elido 182; " +
		"not repaired: 2026-10-24, 07:00 UTC–08:00 UTC: nothing of it was written (1 to add): the store rejected its click at 2026-10-24T07:01:00.000Z"
	if !strings.HasPrefix(got, want) {
		t.Errorf("DescribeResult = %q\nwant it to start %q", got, want)
	}
	if diff := gocmp.Diff(multiset(cat(background(day1), lost), day1), w.rows(t, day1)); diff != "" {
		t.Errorf("the store (-want +got):\n%s", diff)
	}
}
