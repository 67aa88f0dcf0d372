package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// cmdRepair is "clickrecon repair": job.Repair plans the repair
// of the window's settled missing days and, with --apply, inserts the
// clicks through STORE_WRITE_DSN. Every check that needs no network comes
// first, then the store's probe: a usage error, or a store the events
// preset does not fit, exits 2 having sent no request.
func cmdRepair(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	c, err := parseArgs(ctx, "repair", args, env, stdout, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	c.Format = "text" // repair always prints text
	window, dsns, err := c.validateRun(d.now())
	if err != nil {
		return usageExit(stderr, err)
	}
	insertSQL, storeWrite, err := c.validateRepair()
	if err != nil {
		return usageExit(stderr, err)
	}
	query, err := store.LoadQuery(c.StorePreset, "", "") // events: validateRepair refuses the others
	if err != nil {
		return usageExit(stderr, err)
	}
	tsZone, err := store.TimestampZone(c.StoreTSZone)
	if err != nil {
		return usageExit(stderr, err)
	}
	if err := store.CheckZone(dsns.store, query, tsZone, true); err != nil {
		return usageExit(stderr, err)
	}
	// As run does, the store is probed before Elido is asked anything; with
	// --apply, job.Repair checks STORE_WRITE_DSN before its first request.
	if err := probeStore(ctx, c, dsns.store, query, tsZone, window); err != nil {
		return usageExit(stderr, err)
	}
	runKey := report.RunKey(c.WorkspaceID, window, dsns.store.Redacted+" repair")
	log := newLogger(newBar(stderr), c.LogFormat, c.LogLevel).With("run_key", runKey)
	ec := c.elido()
	ec.Logger = log
	client, err := elido.New(ec, d.elido...)
	if err != nil {
		return usageExit(stderr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()

	// Two repairs of one workspace, or a repair and a run, never overlap.
	lock, err, refused := takeLock(ctx, log, c, dsns.lock(), stdout, "run or repair")
	switch {
	case refused:
		return exitIncomplete
	case err != nil:
		log.Error("the run lock could not be taken: nothing is repaired without it", "err", err)
		return exitIncomplete
	}
	defer releaseLock(log, lock)
	jd := job.Deps{Elido: client, Log: log, Now: d.now}
	if lock != nil {
		jd.Held = lock.Held
	}
	return repairExit(job.Repair(ctx, job.RepairOptions{
		Window: window, Settle: c.Settle, Query: query,
		Store: dsns.store, StoreWrite: storeWrite, Insert: insertSQL, Apply: c.Apply,
		TimestampZone: tsZone,
		Dir:           filepath.Join(c.ReportDir, "repair-"+runKey),
	}, jd, stdout))
}

// repairExit maps a repair's outcome to its exit code. 0: every gap found
// was repaired (or printed); 1: some hour was refused, or a day still
// differs; 2: the store could not be opened, or written, as configured
// (STORE_WRITE_DSN names another store, its role lacks a grant) and a
// retry cannot help; 3: a source or a write failed, or the repair was
// interrupted.
func repairExit(out job.RepairOutcome, err error) int {
	switch {
	case needsFixing(err): // the store refused the DSN, or has not the events schema
		return exitUsage
	case err != nil:
		return exitIncomplete
	case needsFixing(out.Err): // a day's write refused by the role's grants
		return exitUsage
	case out.Err != nil:
		return exitIncomplete
	case out.Unrepaired:
		return exitGaps
	}
	return exitOK
}

// validateRepair checks what repair needs beyond what run does, and
// returns the custom insert statement (REPAIR_INSERT_FILE), if any, and
// STORE_WRITE_DSN parsed (zero when unset).
func (c config) validateRepair() (insert string, storeWrite dsn.Target, err error) {
	switch {
	case c.StoreQueryFile != "":
		return "", dsn.Target{}, errors.New("repair reads the events schema (table clicks: ts, link_id, country_code) and cannot use STORE_QUERY_FILE: unset it (REPAIR_INSERT_FILE may give an insert for a table with more columns)")
	case c.StorePreset == store.PresetDaily:
		return "", dsn.Target{}, errors.New("repair needs each click's time, and the daily preset has a counter per link and day: it cannot be repaired click by click (docs/repair.md says how to raise its counters from Elido's per-link breakdown instead)")
	case c.Apply && !c.isSet("STORE_WRITE_DSN", c.StoreWriteDSN):
		return "", dsn.Target{}, errors.New("--apply needs STORE_WRITE_DSN (or STORE_WRITE_DSN_FILE): a role that may insert into the click store; STORE_DSN stays read-only")
	case strings.Contains(c.ReportDir, "://"):
		return "", dsn.Target{}, fmt.Errorf("repair writes its files to a local folder: give --report-dir (RECON_REPORT_DIR) as a path, not %s", dsn.Redact(c.ReportDir))
	}
	if c.StoreWriteDSN != "" {
		if storeWrite, err = store.ParseWriteDSN(c.StoreWriteDSN); err != nil {
			return "", dsn.Target{}, err
		}
	}
	if c.RepairInsertFile == "" {
		return "", storeWrite, nil
	}
	b, err := os.ReadFile(c.RepairInsertFile)
	if err != nil {
		return "", dsn.Target{}, fmt.Errorf("REPAIR_INSERT_FILE: %w", err)
	}
	return string(b), storeWrite, nil
}

// validateRunRepair checks what run's --repair (RECON_REPAIR) needs, with
// or without --apply, and returns the custom insert statement, if any, and
// STORE_WRITE_DSN parsed (zero when unset).
func (c config) validateRunRepair(mode job.RepairMode) (insert string, storeWrite dsn.Target, err error) {
	if mode == job.RepairOff {
		return "", dsn.Target{}, nil
	}
	c.Apply = mode == job.RepairApply
	insert, storeWrite, err = c.validateRepair()
	if err != nil {
		return "", dsn.Target{}, fmt.Errorf("--repair: %w", err)
	}
	return insert, storeWrite, nil
}
