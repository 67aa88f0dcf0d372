package job

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/store"
)

// repairOptions are the options of "clickrecon repair" over the run's
// window and store; apply writes through the store itself.
func repairOptions(t *testing.T, o Options, apply bool) RepairOptions {
	return RepairOptions{
		Window: o.Window, Settle: o.Settle, Query: o.Query,
		Store: o.Store, StoreWrite: dbtest.Parsed(t, store.ParseWriteDSN, "sqlite:"+storeFile(t, o)), Apply: apply,
		Dir: filepath.Join(t.TempDir(), "repair-test"),
	}
}

// storeFile is the path of the demo's SQLite store.
func storeFile(t *testing.T, o Options) string {
	t.Helper()
	u, err := url.Parse(o.Store.Conn)
	if err != nil || o.Store.Dialect != dsn.SQLite {
		t.Fatalf("the demo store is not a SQLite file: %s (%v)", o.Store, err)
	}
	return u.Path
}

// lostDayTotal is the store's total for the demo's day with lost clicks.
func lostDayTotal(t *testing.T, o Options) int64 {
	t.Helper()
	day, _ := reconcile.ParseDate("2026-10-24")
	totals, err := openStore(t, o).Totals(context.Background(), o.Query, []reconcile.Date{day}, o.Window.Loc)
	if err != nil || totals[day].Err != nil {
		t.Fatal(err, totals[day].Err)
	}
	return totals[day].Clicks
}

// Without Apply, Repair writes the plan and prints it, and the store is
// left as it was.
func TestRepairPrintsThePlanAndChangesNothing(t *testing.T) {
	_, o, d := setup(t)
	before := lostDayTotal(t, o)
	ro := repairOptions(t, o, false)
	var stdout bytes.Buffer
	out, err := Repair(context.Background(), ro, d, &stdout)
	if err != nil || out.Err != nil {
		t.Fatalf("Repair: %v, %v", err, out.Err)
	}
	if out.Planned == 0 || out.Inserted != 0 || out.Unrepaired {
		t.Errorf("outcome %+v; want clicks planned, none inserted, nothing refused", out)
	}
	for _, f := range []string{"repair.csv", "surplus.csv", "repair.sql"} {
		if _, err := os.Stat(filepath.Join(ro.Dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if !strings.Contains(stdout.String(), "Nothing was changed: run again with --apply") {
		t.Errorf("stdout does not say nothing changed:\n%s", stdout.String())
	}
	if after := lostDayTotal(t, o); after != before {
		t.Errorf("the store's day went from %d to %d without --apply", before, after)
	}
}

// With Apply, the planned clicks are inserted and the day matches in the
// next run; a second repair finds nothing to insert.
func TestRepairAppliesOnceAndTheDayMatches(t *testing.T) {
	_, o, d := setup(t)
	before := lostDayTotal(t, o)
	out, err := Repair(context.Background(), repairOptions(t, o, true), d, &bytes.Buffer{})
	if err != nil || out.Err != nil || out.Unrepaired {
		t.Fatalf("Repair: %v, %+v", err, out)
	}
	if out.Inserted == 0 || out.Inserted != out.Planned {
		t.Errorf("inserted %d of %d planned clicks", out.Inserted, out.Planned)
	}
	if got := lostDayTotal(t, o); got != before+int64(out.Inserted) {
		t.Errorf("store's day: %d, want %d + %d", got, before, out.Inserted)
	}
	run, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2026-10-23 match", "2026-10-24 match", "2026-10-25 surplus", "2026-10-26 match"}
	if diff := cmp.Diff(want, statuses(run.Result)); diff != "" {
		t.Errorf("days after the repair (-want +got):\n%s", diff)
	}
	again, err := Repair(context.Background(), repairOptions(t, o, true), d, &bytes.Buffer{})
	if err != nil || again.Err != nil || again.Planned != 0 || again.Inserted != 0 {
		t.Errorf("second repair: %v, %+v; want nothing planned or inserted", err, again)
	}
}

// Each repair attempt keeps its own plan: a second --apply, which finds
// nothing left to insert, writes a plan folder of its own and leaves the
// first's, whose repair.csv holds the clicks it inserted, as it was; the
// intents in apply.log name the attempt whose plan they applied.
func TestEveryRepairAttemptKeepsItsRecord(t *testing.T) {
	_, o, d := setup(t)
	ro := repairOptions(t, o, true)
	first, err := Repair(context.Background(), ro, d, &bytes.Buffer{})
	if err != nil || first.Err != nil || first.Inserted == 0 {
		t.Fatalf("first repair: %v, %+v", err, first)
	}
	var stdout bytes.Buffer
	second, err := Repair(context.Background(), ro, d, &stdout)
	if err != nil || second.Err != nil || second.Planned != 0 {
		t.Fatalf("second repair: %v, %+v", err, second)
	}
	attempts, err := filepath.Glob(filepath.Join(ro.Dir, "attempts", "*"))
	if err != nil || len(attempts) != 2 {
		t.Fatalf("attempt folders %q (%v), want one per repair", attempts, err)
	}
	lines := func(path string) int {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
	// Named by time, a second one within the second gets -2: sorted, the
	// first attempt comes first.
	if got := lines(filepath.Join(attempts[0], "repair.csv")); got != 1+first.Inserted {
		t.Errorf("the first attempt's repair.csv has %d lines, want a header and the %d clicks it inserted", got, first.Inserted)
	}
	if got := lines(filepath.Join(attempts[1], "repair.csv")); got != 1 {
		t.Errorf("the second attempt's repair.csv has %d lines, want its header only", got)
	}
	if got := lines(filepath.Join(ro.Dir, "repair.csv")); got != 1 {
		t.Errorf("the latest plan's repair.csv has %d lines, want the second attempt's header only", got)
	}
	for _, f := range []string{"surplus.csv", "repair.sql"} {
		if _, err := os.Stat(filepath.Join(attempts[0], f)); err != nil {
			t.Errorf("the first attempt's %s: %v", f, err)
		}
	}
	log, err := os.ReadFile(filepath.Join(ro.Dir, "apply.log"))
	if want := "(plan in attempts/" + filepath.Base(attempts[0]) + ")"; err != nil || !strings.Contains(string(log), want) {
		t.Errorf("apply.log does not name the first attempt's plan %s (%v):\n%s", want, err, log)
	}
	if !strings.Contains(stdout.String(), attempts[1]) {
		t.Errorf("the second repair does not print its attempt's folder %s:\n%s", attempts[1], stdout.String())
	}
}

// A repair whose run lock was lost after planning inserts nothing and says
// so.
func TestRepairWithoutItsLockInsertsNothing(t *testing.T) {
	_, o, d := setup(t)
	before := lostDayTotal(t, o)
	lost := errors.New("lock session terminated")
	d.Held = func(context.Context) error { return lost }
	var stdout bytes.Buffer
	out, err := Repair(context.Background(), repairOptions(t, o, true), d, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(out.Err, errLockLost) || out.Inserted != 0 {
		t.Errorf("outcome %+v; want the lost lock and nothing inserted", out)
	}
	if !strings.Contains(stdout.String(), "nothing was inserted") {
		t.Errorf("stdout does not say nothing was inserted:\n%s", stdout.String())
	}
	if after := lostDayTotal(t, o); after != before {
		t.Errorf("the store's day went from %d to %d without the lock", before, after)
	}
}

// A store that cannot be opened for writing stops the repair before it
// plans anything: the error is Repair's own, and no plan is written.
func TestRepairWithoutAWritableStorePlansNothing(t *testing.T) {
	_, o, d := setup(t)
	ro := repairOptions(t, o, true)
	ro.StoreWrite = vanished(t, store.ParseWriteDSN)
	out, err := Repair(context.Background(), ro, d, &bytes.Buffer{})
	if err == nil {
		t.Fatalf("Repair opened a store that does not exist: %+v", out)
	}
	if n := d.Elido.Requests(); len(n) != 0 {
		t.Errorf("Elido requests were made: %v", n)
	}
	if _, err := os.Stat(ro.Dir); !os.IsNotExist(err) {
		t.Errorf("a plan was written: %v", err)
	}
}

// run --repair (without --apply) plans the repair of the days the run found missing
// and says so in the report's findings; it inserts nothing.
func TestRunRepairPrintAddsFindings(t *testing.T) {
	_, o, d := setup(t)
	before := lostDayTotal(t, o)
	o.Repair = RepairPrint
	out, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	var repairs []string
	for _, f := range out.Report.Findings {
		if f.Kind == findingRepair {
			repairs = append(repairs, f.Message)
		}
	}
	if len(repairs) == 0 || !strings.Contains(strings.Join(repairs, "\n"), "clicks to restore on 2026-10-24") {
		t.Errorf("repair findings %q; want the clicks to restore on 2026-10-24", repairs)
	}
	if _, err := os.Stat(filepath.Join(o.ReportDir, "repair-"+o.RunKey, "repair.csv")); err != nil {
		t.Errorf("repair.csv not written beside the report: %v", err)
	}
	if after := lostDayTotal(t, o); after != before {
		t.Errorf("the store's day went from %d to %d under --repair without --apply", before, after)
	}
}

// run --repair --apply puts the lost day's clicks back and its report says
// how many on that day (its counts are from before the repair), and on no
// other; the next run finds the day matching.
func TestRunRepairApplyReportsWhatItRestoredByDay(t *testing.T) {
	_, o, d := setup(t)
	before := lostDayTotal(t, o)
	o.Repair, o.StoreWrite = RepairApply, dbtest.Parsed(t, store.ParseWriteDSN, "sqlite:"+storeFile(t, o))
	out, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	after := lostDayTotal(t, o)
	if after <= before {
		t.Fatalf("the store's day went from %d to %d: nothing was repaired", before, after)
	}
	for _, day := range out.Report.Days {
		want := int64(0)
		if day.Date == "2026-10-24" {
			want = after - before
		}
		if day.Repaired != want {
			t.Errorf("%s: repaired %d, want %d (status %s)", day.Date, day.Repaired, want, day.Status)
		}
	}
}

// run --repair --apply with a STORE_WRITE_DSN that names a copy of the store
// writes into neither: its finding says why, naming both variables.
func TestRunRepairApplyIntoAnotherStoreWritesNothing(t *testing.T) {
	_, o, d := setup(t)
	before := lostDayTotal(t, o)
	b, err := os.ReadFile(storeFile(t, o))
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(copyPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	o.Repair, o.StoreWrite = RepairApply, dbtest.Parsed(t, store.ParseWriteDSN, "sqlite:"+copyPath)
	out, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	var repairs []string
	for _, f := range out.Report.Findings {
		if f.Kind == findingRepair {
			repairs = append(repairs, f.Message)
		}
	}
	if got := strings.Join(repairs, "\n"); !strings.Contains(got, "no repair: STORE_WRITE_DSN names another store than STORE_DSN") {
		t.Errorf("repair findings %q; want the other store refused", repairs)
	}
	if after := lostDayTotal(t, o); after != before {
		t.Errorf("the store's day went from %d to %d", before, after)
	}
	if c, err := os.ReadFile(copyPath); err != nil || !bytes.Equal(c, b) {
		t.Errorf("the copy was written to (%v)", err)
	}
}

// A plan folder that cannot be made (a file in its place) stops the repair
// before anything is written: the plan is recorded first or not at all.
// A journal that cannot be appended to (apply.log a folder) refuses each
// day before its transaction.
func TestRepairWhoseFilesAreRefusedInsertsNothing(t *testing.T) {
	for _, tt := range []struct {
		name  string
		block func(t *testing.T, dir string) // makes dir's files unwritable
		want  string
	}{
		{"plan_folder", func(t *testing.T, dir string) {
			if err := os.WriteFile(dir, []byte("not a folder"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a directory"},
		{"journal", func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, "apply.log"), 0o750); err != nil {
				t.Fatal(err)
			}
		}, "record the intended repair"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, o, d := setup(t)
			before := lostDayTotal(t, o)
			ro := repairOptions(t, o, true)
			tt.block(t, ro.Dir)
			out, err := Repair(context.Background(), ro, d, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if out.Err == nil || !strings.Contains(out.Err.Error(), tt.want) || out.Inserted != 0 {
				t.Errorf("outcome %+v; want an error saying %q and nothing inserted", out, tt.want)
			}
			if after := lostDayTotal(t, o); after != before {
				t.Errorf("the store's day went from %d to %d though the repair could not be recorded", before, after)
			}
		})
	}
}

// Plan files left by a run killed while writing them (a repair.csv cut
// short, a longer repair.sql of an older plan) are replaced whole by the
// next repair, never appended to or mixed with its own.
func TestRepairRewritesAHalfWrittenPlanWhole(t *testing.T) {
	_, o, d := setup(t)
	fresh := repairOptions(t, o, false)
	if out, err := Repair(context.Background(), fresh, d, &bytes.Buffer{}); err != nil || out.Err != nil {
		t.Fatalf("Repair: %v, %+v", err, out)
	}
	ro := repairOptions(t, o, false)
	if err := os.MkdirAll(ro.Dir, 0o750); err != nil {
		t.Fatal(err)
	}
	files := []string{"repair.csv", "surplus.csv", "repair.sql"}
	want := map[string]string{}
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(fresh.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want[name] = string(b)
		stale := b[:len(b)/2] // cut short
		if name == "repair.sql" {
			stale = append(bytes.Repeat(b, 2), "-- an older plan\n"...) // longer
		}
		if err := os.WriteFile(filepath.Join(ro.Dir, name), stale, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := Repair(context.Background(), ro, d, &bytes.Buffer{}); err != nil || out.Err != nil {
		t.Fatalf("Repair over a half-written plan: %v, %+v", err, out)
	}
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(ro.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[name], string(b)); diff != "" {
			t.Errorf("%s is not the new plan whole (-want +got):\n%s", name, diff)
		}
	}
}
