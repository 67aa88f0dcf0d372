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
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/repair"
	"github.com/clickrecon/clickrecon/sources/store"
)

// The writer's connection is killed in the middle of a day's transaction:
// the day is absent, never half written, and the next repair writes it
// whole.
func TestConnectionKilledMidDayLeavesItWholeOrAbsent(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			w, elidoClicks, _ := e.lostBurst(t)
			o := w.options(day1)
			plans := w.plan(t, o)
			before := w.rows(t, day1)
			res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, func(_ reconcile.Date, n int) {
				if n == 30 {
					e.killWriter(t, w.db)
				}
			})
			if len(res) != 1 || res[0].Err == nil || res[0].Inserted != 0 {
				t.Fatalf("Apply = %+v; want the day failed with nothing written", res)
			}
			if diff := gocmp.Diff(before, w.rows(t, day1)); diff != "" {
				t.Errorf("the day is half written (-before +after):\n%s", diff)
			}
			again := w.plan(t, o)
			if res := repair.Apply(t.Context(), w.w, w.st, o, again, nil, nil); len(res) != 1 || res[0].Err != nil || res[0].Inserted != 60 {
				t.Errorf("second repair: %+v; want the day whole", res)
			}
			if diff := gocmp.Diff(multiset(elidoClicks, day1), w.rows(t, day1)); diff != "" {
				t.Errorf("after the second repair (-elido +store):\n%s", diff)
			}
		})
	}
}

// lostAnswer is a Writer whose commit reaches the store but whose answer
// is lost on the way back, as when the connection drops right after
// COMMIT.
type lostAnswer struct{ repair.Writer }

func (l lostAnswer) Insert(ctx context.Context, checks []store.HourCheck, hours []store.HourWrite, inserted func(int)) (store.Written, error) {
	if _, err := l.Writer.Insert(ctx, checks, hours, inserted); err != nil {
		return store.Written{}, err
	}
	return store.Written{}, errors.New("commit repair: driver: bad connection")
}

// The commit is answered but the answer lost: the repair reports the day
// as failed; the rerun re-counts, finds nothing missing and inserts 0.
func TestAnswerLostRerunInsertsNothing(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			w, elidoClicks, _ := e.lostBurst(t)
			o := w.options(day1)
			plans := w.plan(t, o)
			if res := repair.Apply(t.Context(), lostAnswer{w.w}, w.st, o, plans, nil, nil); len(res) != 1 || res[0].Err == nil {
				t.Fatalf("Apply = %+v; want the day reported failed", res)
			}
			again := w.plan(t, o)
			if len(again[0].Add()) != 0 || again[0].Skipped == "" {
				t.Errorf("rerun plan %+v; want nothing to add", again[0])
			}
			if res := repair.Apply(t.Context(), w.w, w.st, o, again, nil, nil); len(res) != 0 {
				t.Errorf("rerun applied %+v, want nothing", res)
			}
			if diff := gocmp.Diff(multiset(elidoClicks, day1), w.rows(t, day1)); diff != "" {
				t.Errorf("after the rerun (-elido +store):\n%s", diff)
			}
		})
	}
}

// The store holds rows Elido never had (clicks from the customer's own
// server) in the very hour that lost a burst: they are listed as surplus,
// never deleted, the burst is restored once, and a rerun plans and
// inserts nothing.
func TestForeignRowsKeptAndNothingDuplicated(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			lost := burst(hourOf(day1, 2).Add(17*time.Minute), 60, "lnk_burst")
			foreign := burst(hourOf(day1, 2).Add(40*time.Minute), 3, "lnk_own_server")
			elidoClicks := cat(background(day1), lost)
			w := e.world(t, elidoClicks, cat(without(elidoClicks, lost), foreign))
			o := w.options(day1)
			plans, err := repair.Plan(t.Context(), w.api, w.st, o)
			if err != nil {
				t.Fatal(err)
			}
			res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil)
			if len(res) != 1 || res[0].Err != nil || res[0].Inserted != 60 {
				t.Fatalf("Apply = %+v; want the burst restored", res)
			}
			if diff := gocmp.Diff(multiset(cat(elidoClicks, foreign), day1), w.rows(t, day1)); diff != "" {
				t.Errorf("after the repair (-want +store):\n%s", diff)
			}
			again := w.plan(t, o)
			if res := repair.Apply(t.Context(), w.w, w.st, o, again, nil, nil); len(res) != 0 {
				t.Errorf("rerun applied %+v, want nothing", res)
			}
			if diff := gocmp.Diff(multiset(cat(elidoClicks, foreign), day1), w.rows(t, day1)); diff != "" {
				t.Errorf("after the rerun (-want +store):\n%s", diff)
			}
		})
	}
}

// repair.sql run by hand takes the same lock as repair --apply: a
// receiver's insert under way is waited for and counted, and the script
// then fails its check and writes nothing.
func TestRepairSQLWaitsForAReceiverAndRefuses(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			w, _, lost := e.lostBurst(t)
			run := e.sqlRunner(t, w)
			plans := w.plan(t, w.options(day1))
			var script strings.Builder
			if err := repair.WriteSQL(&script, plans, e.dialect); err != nil {
				t.Fatal(err)
			}
			receiver, err := w.db.BeginTxx(t.Context(), &sql.TxOptions{Isolation: sql.LevelReadCommitted})
			if err != nil {
				t.Fatal(err)
			}
			defer receiver.Rollback()
			e.insert(t, receiver, lost[:1])
			ran := make(chan error, 1)
			go func() { ran <- run(context.Background(), script.String()) }()
			stop := make(chan struct{})
			defer close(stop)
			select {
			case <-lockWaiter(t, w, stop):
			case err := <-ran:
				t.Fatalf("repair.sql ran (%v) without waiting for the receiver's open insert", err)
			}
			if err := receiver.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-ran; err == nil || !strings.Contains(err.Error(), e.sqlRefusal) {
				t.Errorf("repair.sql: %v; want its check to fail", err)
			}
			if got, want := len(w.rows(t, day1)), len(background(day1))+1; got != want {
				t.Errorf("the store has %d clicks, want %d (the receiver's only)", got, want)
			}
		})
	}
}

// A table whose trigger drops some of the rows inserted into it (a
// PostgreSQL BEFORE INSERT trigger returning NULL; a MariaDB one that
// moves the row to another day): the repair sends 6 clicks and the store
// keeps 4. The result says what the store holds after the insert, counted
// in the day's transaction, not what was sent, and says the difference.
func TestTriggerDroppingRowsIsToldWhatTheStoreKept(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			drop := map[dsn.Dialect][]string{
				dsn.Postgres: {
					`CREATE FUNCTION drop_some() RETURNS trigger LANGUAGE plpgsql AS $$
					 BEGIN IF NEW.link_id = 'lnk_drop' THEN RETURN NULL; END IF; RETURN NEW; END $$`,
					`CREATE TRIGGER clicks_drop BEFORE INSERT ON clicks FOR EACH ROW EXECUTE FUNCTION drop_some()`,
				},
				dsn.MySQL: {
					`CREATE TRIGGER clicks_drop BEFORE INSERT ON clicks FOR EACH ROW
					 SET NEW.ts = IF(NEW.link_id = 'lnk_drop', NEW.ts - INTERVAL 40 DAY, NEW.ts)`,
				},
			}[e.dialect]
			kept := burst(hourOf(day1, 2).Add(17*time.Minute), 4, "lnk_keep")
			dropped := burst(hourOf(day1, 2).Add(19*time.Minute), 2, "lnk_drop")
			elidoClicks := cat(background(day1), kept, dropped)
			w := e.worldAltered(t, nil, elidoClicks, background(day1))
			for _, stmt := range drop {
				if _, err := w.db.Exec(stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			o := w.options(day1)
			plans := w.plan(t, o)
			res := repair.Apply(t.Context(), w.w, w.st, o, plans, nil, nil)
			if len(res) != 1 || res[0].Err != nil {
				t.Fatalf("Apply = %+v; want the day written", res)
			}
			if res[0].Sent != 6 || res[0].Inserted != 4 {
				t.Errorf("Apply: sent %d, inserted %d; want 6 sent and the 4 the store kept", res[0].Sent, res[0].Inserted)
			}
			got := repair.DescribeResult(plans[0], res[0], time.UTC)
			want := "restored 4 clicks on 2026-10-24, 02:00 UTC–03:00 UTC: 6 were sent and the store kept 4; 2 were not kept " +
				"(a trigger, rule or INSERT IGNORE of the store's dropped or moved them); the day still differs: the store has 124, Elido 126"
			if got != want {
				t.Errorf("DescribeResult =\n %q\nwant\n %q", got, want)
			}
			if diff := gocmp.Diff(multiset(cat(background(day1), kept), day1), w.rows(t, day1)); diff != "" {
				t.Errorf("the store (-want +got):\n%s", diff)
			}
		})
	}
}
