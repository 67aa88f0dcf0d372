package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/job"
	"github.com/clickrecon/clickrecon/internal/repair"
	"github.com/clickrecon/clickrecon/internal/runlock"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// cmdRepair is "clickrecon repair": it plans the repair of the window's
// settled missing days, writes repair.csv, surplus.csv and repair.sql
// beside the reports, and, with --apply, inserts the clicks through
// STORE_WRITE_DSN, one transaction per day. Every check that needs no
// network comes first: a usage error exits 2 having sent no request.
func cmdRepair(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	c, err := parseArgs(ctx, "repair", args, env, stdout, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	window, err := c.validateRun(d.now())
	if err != nil {
		return usageExit(stderr, err)
	}
	insertSQL, err := c.validateRepair()
	if err != nil {
		return usageExit(stderr, err)
	}
	query, err := store.PresetQuery(store.PresetEvents)
	if err != nil {
		return usageExit(stderr, err)
	}
	storeID := store.RedactDSN(c.StoreDSN) + " repair"
	runKey := report.RunKey(c.WorkspaceID, window, storeID)
	log := newLogger(job.NewBar(stderr), c.LogFormat, c.LogLevel).With("run_key", runKey)
	ec := c.elido()
	ec.Logger = log
	client, err := elido.New(ec, d.elido...)
	if err != nil {
		return usageExit(stderr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()

	// Two repairs of one workspace, or a repair and a run, never overlap.
	var held func(context.Context) error
	if lockDSN := c.lockDSN(); lockDSN != "" {
		lock, err := runlock.Take(ctx, lockDSN, c.WorkspaceID)
		switch {
		case errors.Is(err, runlock.ErrLocked):
			fmt.Fprintf(stdout, "clickrecon: another run or repair of workspace %s is in progress (it holds the lock); nothing was done\n", c.WorkspaceID)
			return exitIncomplete
		case err != nil:
			log.Error("the run lock could not be taken: nothing is repaired without it", "err", err)
			return exitIncomplete
		}
		defer lock.Release()
		held = lock.Held
	}
	st, err := store.Open(ctx, c.StoreDSN)
	if err != nil {
		log.Error("store not opened", "err", err)
		return openExit(err)
	}
	defer st.Close()
	r := repairRun{
		api: client, store: st, log: log, stdout: stdout,
		opts:     repair.Options{Window: window, Settle: c.Settle, Now: d.now(), Query: query},
		dir:      filepath.Join(c.ReportDir, "repair-"+runKey),
		postgres: !strings.HasPrefix(c.StoreDSN, "sqlite:"),
		held:     held,
	}
	if c.Apply {
		w, err := store.OpenWriter(ctx, c.StoreWriteDSN, insertSQL)
		if err != nil {
			log.Error("store not opened for writing", "err", err)
			return openExit(err)
		}
		defer w.Close()
		r.writer = w
	}
	return runRepair(ctx, r)
}

// openExit is the exit code of a store that could not be opened.
func openExit(err error) int {
	if errors.Is(err, store.ErrRefused) || errors.Is(err, store.ErrBadQuery) {
		return exitUsage
	}
	return exitIncomplete
}

// validateRepair checks what repair needs beyond what run does, and
// returns the custom insert statement (REPAIR_INSERT_FILE), if any.
func (c config) validateRepair() (string, error) {
	switch {
	case c.StoreQueryFile != "":
		return "", errors.New("repair reads the events schema (table clicks: ts, link_id, country_code) and cannot use STORE_QUERY_FILE: unset it (REPAIR_INSERT_FILE may give an insert for a table with more columns)")
	case c.StorePreset == store.PresetDaily:
		return "", errors.New("repair needs each click's time, and the daily preset has a counter per link and day: it cannot be repaired click by click (see \"Repairing lost clicks\" in the README for repairing counters from Elido's per-link breakdown)")
	case c.Apply && c.StoreWriteDSN == "":
		return "", errors.New("--apply needs STORE_WRITE_DSN (or STORE_WRITE_DSN_FILE): a role that may insert into the click store; STORE_DSN stays read-only")
	case strings.Contains(c.ReportDir, "://"):
		return "", fmt.Errorf("repair writes its files to a local folder: give --report-dir (RECON_REPORT_DIR) as a path, not %s", dsn.Redact(c.ReportDir))
	}
	if c.StoreWriteDSN != "" {
		if _, err := dsn.Parse(c.StoreWriteDSN, dsn.Options{Name: "STORE_WRITE_DSN", Mode: dsn.ReadWrite, MissingHint: "repair writes into an existing store"}); err != nil {
			return "", err
		}
	}
	if c.RepairInsertFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(c.RepairInsertFile)
	if err != nil {
		return "", fmt.Errorf("REPAIR_INSERT_FILE: %w", err)
	}
	return string(b), nil
}

// validateRunRepair checks run's --repair (RECON_REPAIR) and what its
// mode needs, and returns the custom insert statement, if any.
func (c config) validateRunRepair() (string, error) {
	switch c.Repair {
	case job.RepairOff:
		return "", nil
	case job.RepairPrint, job.RepairApply:
	default:
		return "", fmt.Errorf("--repair (RECON_REPAIR) must be print or apply, got %q", c.Repair)
	}
	c.Apply = c.Repair == job.RepairApply
	insert, err := c.validateRepair()
	if err != nil {
		return "", fmt.Errorf("--repair %s: %w", c.Repair, err)
	}
	return insert, nil
}

// repairRun is one repair's sources, options and outputs.
type repairRun struct {
	api      repair.Elido
	store    repair.Store
	writer   repair.Writer // nil: print only
	opts     repair.Options
	dir      string // where repair.csv, surplus.csv and repair.sql go
	postgres bool   // repair.sql is for PostgreSQL
	log      *slog.Logger
	stdout   io.Writer
	held     func(context.Context) error // checks the run lock is still ours; nil: no lock
}

// runRepair plans, writes the plan's files, prints it, and applies it when
// there is a writer. Exit 0: every gap found was repaired (or printed);
// 1: some hour was refused, or a day still differs; 3: a source or a
// write failed, or the repair was interrupted.
func runRepair(ctx context.Context, r repairRun) int {
	loc := r.opts.Window.Loc
	plans, err := repair.Plan(ctx, r.api, r.store, r.opts)
	if err != nil {
		r.log.Error("repair not planned", "err", err)
		fmt.Fprintf(r.stdout, "clickrecon repair: %v\n", err)
		return exitIncomplete
	}
	// The plan is written before anything is applied: what a repair is
	// about to insert is on disk first.
	if err := repair.WritePlan(r.dir, plans, r.postgres); err != nil {
		r.log.Error("repair plan not written: nothing applied", "err", err)
		return exitIncomplete
	}
	code := exitOK
	var add int
	for _, p := range plans {
		add += len(p.Add())
		if p.Skipped != "" {
			fmt.Fprintf(r.stdout, "%s: %s\n", p.Day, p.Skipped)
			continue
		}
		for _, line := range repair.Describe(p, loc) {
			fmt.Fprintf(r.stdout, "%s\n", line)
			if strings.HasPrefix(line, "not repaired") {
				code = exitGaps
			}
		}
	}
	fmt.Fprintf(r.stdout, "%d clicks to restore; the plan is in %s (repair.csv, surplus.csv, repair.sql)\n", add, r.dir)
	r.log.Info("repair planned", "days", len(plans), "clicks_to_add", add, "dir", r.dir)
	if r.writer == nil {
		if add > 0 {
			fmt.Fprintln(r.stdout, "Nothing was changed: run again with --apply and STORE_WRITE_DSN to insert them.")
		}
		return code
	}
	if r.held != nil {
		if err := r.held(ctx); err != nil {
			r.log.Error("the run lock is no longer held: nothing applied", "err", err)
			fmt.Fprintln(r.stdout, "The run lock was lost before writing: nothing was inserted; run repair again.")
			return exitIncomplete
		}
	}
	j := repair.FileJournal{Path: filepath.Join(r.dir, "apply.log")}
	results := repair.Apply(ctx, r.writer, r.store, r.opts, plans, j, nil)
	byDay := map[reconcile.Date]repair.DayPlan{}
	for _, p := range plans {
		byDay[p.Day] = p
	}
	inserted := 0
	for _, res := range results {
		inserted += res.Inserted
		fmt.Fprintln(r.stdout, repair.DescribeResult(byDay[res.Day], res, loc))
		switch {
		case res.Err != nil:
			r.log.Error("day not repaired", "day", res.Day.String(), "err", res.Err)
			code = exitIncomplete
		case !res.Matches() && code == exitOK:
			code = exitGaps
		}
	}
	fmt.Fprintf(r.stdout, "%d clicks inserted\n", inserted)
	r.log.Info("repair applied", "days", len(results), "clicks_inserted", inserted)
	return code
}
