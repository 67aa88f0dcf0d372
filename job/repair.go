package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/words"
	"github.com/clickrecon/clickrecon/job/runlock"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/repair"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/sources/store"
)

// RepairMode is what a run does with the settled missing days it finds
// (--repair); its values are the option's.
type RepairMode string

// The repair modes of a run.
const (
	RepairOff   RepairMode = ""
	RepairPrint RepairMode = "print" // plan the repair of the missing days and write its files
	RepairApply RepairMode = "apply" // and insert the clicks through Options.StoreWrite
)

// findingRepair is the kind of the findings the repair stage adds: Slack
// shows them with the others.
const findingRepair = "repair"

// RepairOptions are the validated settings of one "clickrecon repair".
type RepairOptions struct {
	Window reconcile.Window
	Settle time.Duration // RECON_SETTLE: only settled days are repaired
	Query  store.Query   // the events preset
	// Store (STORE_DSN) is read, StoreWrite (STORE_WRITE_DSN) written
	// with Insert (the text of REPAIR_INSERT_FILE; "": the events
	// schema's) when Apply is set.
	Store      dsn.Target
	StoreWrite dsn.Target
	Insert     string
	Apply      bool
	// TimestampZone is STORE_TIMESTAMP_TZ, for reading and writing a ts
	// column of type timestamp (without time zone). nil: UTC.
	TimestampZone *time.Location
	Dir           string // where repair.csv, surplus.csv, repair.sql and apply.log go
	// Lock is the database the run lock is taken on (runlock.On), for
	// WorkspaceID; zero: no lock. Two repairs of one workspace, or a
	// repair and a run, never overlap.
	Lock        dsn.Target
	WorkspaceID string
}

// RepairOutcome is what a repair did.
type RepairOutcome struct {
	Planned  int // clicks the plan puts back
	Inserted int // clicks the store kept of those inserted (Apply only)
	Sent     int // clicks inserted (Apply only); more than Inserted where the store dropped some
	// Unrepaired says an hour was refused, or a day still differs after
	// the repair.
	Unrepaired bool
	// Err says why the repair could not complete: it was not planned, its
	// plan not written, the lock was lost, or a day was not inserted.
	Err error
	// Code is the repair's exit code (repairExit).
	Code int
}

// Repair is "clickrecon repair": it takes the run lock (takeLock), as a
// run does, then plans the repair of the window's settled missing days,
// writes the plan's files to o.Dir before anything is applied, prints the
// plan on stdout and, with o.Apply, inserts the clicks one transaction
// per day and prints how each day ended. The error is set only when the
// lock was not taken (another run holds it, or it could not be: nothing
// is repaired without it), or the store could not be opened, for reading
// or for writing: then nothing was planned. The outcome's Code is the
// exit code either way.
func Repair(ctx context.Context, o RepairOptions, d Deps, stdout io.Writer) (RepairOutcome, error) {
	d = d.withDefaults()
	lock, err, refused := takeLock(ctx, d.Log, o.Lock, o.WorkspaceID, "text", stdout, "run or repair")
	switch {
	case refused:
		return RepairOutcome{Code: ExitIncomplete}, runlock.ErrLocked
	case err != nil:
		d.Log.Error("the run lock could not be taken: nothing is repaired without it", "err", err)
		return RepairOutcome{Code: ExitIncomplete}, err
	}
	defer releaseLock(d.Log, lock)
	if lock != nil {
		d.Held = lock.Held
	}
	out, err := repairWindow(ctx, o, d, stdout)
	out.Code = repairExit(out, err)
	return out, err
}

// repairWindow is the repair of Repair, under its lock: the store opened
// (and, to apply, its writer), the plan made and written (planRepair),
// printed (printPlan) and, with o.Apply, inserted.
func repairWindow(ctx context.Context, o RepairOptions, d Deps, stdout io.Writer) (RepairOutcome, error) {
	log := d.Log
	so := store.Options{TimestampZone: o.TimestampZone}
	st, err := store.Open(ctx, o.Store, so)
	if err != nil {
		log.Error("store not opened", "err", err)
		return RepairOutcome{}, err
	}
	defer st.Close()
	var w *store.Writer
	if o.Apply {
		if w, err = openWriter(ctx, st, o.StoreWrite, o.Insert, so); err != nil {
			log.Error("store not opened for writing: nothing planned or written", "err", err)
			fmt.Fprintf(stdout, "clickrecon repair: nothing planned or written: %v\n", err)
			return RepairOutcome{}, err
		}
		defer w.Close()
	}
	var out RepairOutcome
	opts, plans, attempt, err := planRepair(ctx, o, d, st, stdout)
	if err != nil {
		out.Err = err
		return out, nil
	}
	out.Planned, out.Unrepaired = printPlan(stdout, plans, o.Window.Loc)
	fmt.Fprintf(stdout, "%s to restore; the plan is in %s (repair.csv, surplus.csv, repair.sql), and this attempt's own copy in %s\n", words.Plural(out.Planned, "click", "clicks"), o.Dir, attempt)
	log.Info("repair planned", "days", len(plans), "clicks_to_add", out.Planned, "dir", o.Dir, "attempt", attempt)
	if w == nil {
		if out.Planned > 0 {
			fmt.Fprintln(stdout, "Nothing was changed: run again with --apply and STORE_WRITE_DSN to insert them.")
		}
		return out, nil
	}
	if err := held(ctx, d); err != nil {
		fmt.Fprintln(stdout, "The run lock was lost before writing: nothing was inserted; run repair again.")
		out.Err = err
		return out, nil
	}
	results, lines := applyRepair(ctx, d, w, st, opts, plans, o.Dir, attempt)
	for i, r := range results {
		out.Inserted += r.Inserted
		out.Sent += r.Sent
		fmt.Fprintln(stdout, lines[i])
		out.Err = firstErr(out.Err, r.Err)
		out.Unrepaired = out.Unrepaired || !r.Matches()
	}
	if out.Sent == out.Inserted {
		fmt.Fprintf(stdout, "%s inserted\n", words.Plural(out.Inserted, "click", "clicks"))
	} else {
		fmt.Fprintf(stdout, "%s inserted: %s\n", words.Plural(out.Inserted, "click", "clicks"), repair.KeptNote(out.Sent, out.Inserted))
	}
	log.Info("repair applied", "days", len(results), "clicks_inserted", out.Inserted, "clicks_sent", out.Sent)
	return out, nil
}

// planRepair plans the repair of o's window on the store st reads, with
// the notes on how the store holds its times printed first, and writes
// the plan's files to o.Dir. It returns the options it planned with, the
// plans and the attempt's own folder, or why nothing was planned or
// written (said on stdout or in the log).
func planRepair(ctx context.Context, o RepairOptions, d Deps, st *store.Store, stdout io.Writer) (
	opts repair.Options, plans []repair.DayPlan, attempt string, err error) {
	log := d.Log
	opts = repair.Options{Window: o.Window, Settle: o.Settle, Now: d.Now(), Query: o.Query}
	naive, _, err := assumedZone(ctx, log, st, o.Query, o.Window)
	if err != nil {
		fmt.Fprintf(stdout, "clickrecon repair: nothing planned: %v\n", err)
		return opts, nil, "", err
	}
	if naive.Assumed() {
		fmt.Fprintf(stdout, "note: %s\n", naive.Note())
	}
	for _, f := range assumed(ctx, log, st, o.Query, o.Window.Loc) {
		fmt.Fprintf(stdout, "note: %s\n", f.Message)
	}
	opts.Wall = naive.WallZone()
	plans, err = repair.Plan(ctx, d.Elido, st, opts)
	if err != nil {
		log.Error("repair not planned", "err", err)
		fmt.Fprintf(stdout, "clickrecon repair: %v\n", err)
		return opts, nil, "", err
	}
	attempt, err = repair.WritePlan(o.Dir, d.Now(), plans, o.Store.Dialect)
	if err != nil {
		log.Error("repair plan not written: nothing applied", "err", err)
		return opts, nil, "", err
	}
	return opts, plans, attempt, nil
}

// printPlan prints each day's plan on stdout, in loc, and returns the
// clicks the plans put back and whether an hour was refused.
func printPlan(stdout io.Writer, plans []repair.DayPlan, loc *time.Location) (planned int, refused bool) {
	for _, p := range plans {
		planned += len(p.Add())
		if p.Skipped != "" {
			fmt.Fprintf(stdout, "%s: %s\n", p.Day, p.Skipped)
			continue
		}
		for _, line := range repair.Describe(p, loc) {
			fmt.Fprintf(stdout, "%s\n", line.Text)
			refused = refused || line.Refused
		}
	}
	return planned, refused
}

// runRepair is what the repair stage of a run reads of its Options.
type runRepair struct {
	Repair        RepairMode
	Window        reconcile.Window
	Settle        time.Duration
	Query         store.Query
	TimestampZone *time.Location
	Store         dsn.Target // its dialect names the repair.sql it writes
	StoreWrite    dsn.Target
	RepairInsert  string
	ReportDir     string // the plan goes in repair-RunKey beside the reports
	RunKey        string
	// DryRun and Unlocked only print the plan.
	DryRun, Unlocked bool
	// Reads are the raw clicks the run's diagnosis read, which the
	// repair takes instead of reading them again; nil: none.
	Reads *rawReads
}

// repairRun returns what the repair stage reads of o.
func (o Options) repairRun() runRepair {
	return runRepair{Repair: o.Repair, Window: o.Window, Settle: o.Settle, Query: o.Query, TimestampZone: o.TimestampZone,
		Store: o.Store, StoreWrite: o.StoreWrite, RepairInsert: o.RepairInsert, ReportDir: o.ReportDir, RunKey: o.RunKey,
		DryRun: o.DryRun, Unlocked: o.Unlocked}
}

// repairMissing is the run's opt-in repair stage: for the settled days the
// run found missing, it plans the repair (repair), writes its
// files beside the report, and with RepairApply inserts them, one
// transaction per day. A dry run, or one without its lock, only prints.
// It returns findings that say what was repaired, or why not, and the
// clicks the store kept of those inserted, by day. Run calls it only for
// a store it read and a run that was not stopped.
//
// naive is how the store holds its times (store.Naive), and naiveErr why
// that could not be read: then nothing is planned, as a wall-clock
// column's clicks must be compared by wall-clock time.
func repairMissing(ctx context.Context, d Deps, o runRepair, st *store.Store, naive store.Naive, naiveErr error, res reconcile.Result) ([]report.Finding, map[reconcile.Date]int64) {
	if o.Repair == RepairOff {
		return nil, nil
	}
	var days []reconcile.Date
	for _, day := range res.Days {
		if day.Settled && day.Status == reconcile.Missing {
			days = append(days, day.Date)
		}
	}
	if len(days) == 0 {
		return nil, nil
	}
	log := d.Log
	finding := func(format string, args ...any) report.Finding {
		return report.Finding{Kind: findingRepair, Message: fmt.Sprintf(format, args...)}
	}
	if naiveErr != nil {
		return []report.Finding{finding("no repair: %v", naiveErr)}, nil
	}
	opts := repair.Options{Window: o.Window, Settle: o.Settle, Now: d.Now(), Query: o.Query, Days: days, Wall: naive.WallZone()}
	plans, err := repair.Plan(ctx, repairElido(d.Elido, o.Reads), st, opts)
	if err != nil {
		log.Error("repair not planned", "err", err)
		return []report.Finding{finding("no repair: %v", err)}, nil
	}
	dir := storage.RepairDir(o.ReportDir, o.RunKey)
	attempt, err := repair.WritePlan(dir, d.Now(), plans, o.Store.Dialect)
	if err != nil {
		log.Error("repair plan not written: nothing applied", "err", err)
		return []report.Finding{finding("no repair: its plan could not be written: %v", err)}, nil
	}
	var out []report.Finding
	apply := o.Repair == RepairApply && !o.DryRun && !o.Unlocked
	for _, p := range plans {
		for _, line := range repair.Describe(p, o.Window.Loc) {
			if apply && !line.Refused {
				continue // the result says it
			}
			out = append(out, finding("%s", line.Text))
		}
	}
	log.Info("repair planned", "days", len(plans), "dir", dir, "attempt", attempt)
	if !apply {
		return out, nil
	}
	if err := held(ctx, d); err != nil {
		return append(out, finding("no repair: the run lock was lost before writing; run clickrecon repair --apply")), nil
	}
	w, err := openWriter(ctx, st, o.StoreWrite, o.RepairInsert, store.Options{TimestampZone: o.TimestampZone})
	if err != nil {
		log.Error("store not opened for writing: nothing repaired", "err", err)
		return append(out, finding("no repair: %v", err)), nil
	}
	defer w.Close()
	results, lines := applyRepair(ctx, d, w, st, opts, plans, dir, attempt)
	for _, line := range lines {
		out = append(out, finding("%s", line))
	}
	kept := map[reconcile.Date]int64{}
	for _, r := range results {
		if r.Inserted > 0 {
			kept[r.Day] += int64(r.Inserted)
		}
	}
	return out, kept
}

// openWriter opens STORE_WRITE_DSN for writing and checks, before
// anything is written, that it names the store st reads: a repair planned
// on one store is never written into another.
func openWriter(ctx context.Context, st *store.Store, write dsn.Target, insert string, so store.Options) (*store.Writer, error) {
	w, err := store.OpenWriter(ctx, write, insert, so)
	if err != nil {
		return nil, err
	}
	if err := w.CheckTarget(ctx, st); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// errLockLost stops a repair whose run lock is no longer held.
var errLockLost = errors.New("the run lock is no longer held: nothing was inserted")

// held checks, when the run has a lock, that it is still this run's.
func held(ctx context.Context, d Deps) error {
	if d.Held == nil {
		return nil
	}
	if err := d.Held(ctx); err != nil {
		d.Log.Error("the run lock is no longer held: nothing repaired", "err", err)
		return fmt.Errorf("%w: %v", errLockLost, err)
	}
	return nil
}

// applyRepair inserts the plans' clicks, one transaction per day,
// journalled in dir/apply.log (each intent naming the attempt's folder,
// whose plan holds the clicks), and returns each day's result with the
// line that says how it ended. The caller has checked the run lock.
func applyRepair(ctx context.Context, d Deps, w repair.Writer, st repair.Store, opts repair.Options, plans []repair.DayPlan, dir, attempt string) ([]repair.DayResult, []string) {
	byDay := map[reconcile.Date]repair.DayPlan{}
	for _, p := range plans {
		byDay[p.Day] = p
	}
	j := repair.FileJournal{Path: filepath.Join(dir, "apply.log"), Attempt: attempt, Now: d.Now}
	results := repair.Apply(ctx, w, st, opts, plans, j, nil)
	lines := make([]string, len(results))
	for i, r := range results {
		if r.Err != nil {
			d.Log.Error("day not repaired", "day", r.Day.String(), "err", r.Err)
		} else {
			d.Log.Info("day repaired", "day", r.Day.String(), "inserted", r.Inserted, "sent", r.Sent, "matches", r.Matches())
		}
		lines[i] = repair.DescribeResult(byDay[r.Day], r, opts.Window.Loc)
	}
	return results, lines
}
