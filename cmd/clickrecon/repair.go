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

	"github.com/clickrecon/clickrecon/internal/console"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// cmdRepair is "clickrecon repair": job.Repair takes the run lock, plans
// the repair of the window's settled missing days and, with --apply,
// inserts the clicks through STORE_WRITE_DSN. Every check that needs no
// network comes first, then the store's probe: a usage error, or a store
// the events preset does not fit, exits 2 having sent no request.
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
	if err := job.ProbeStore(ctx, c.Timeout, job.StoreProbe{Store: dsns.store, Query: query, QueryFile: c.StoreQueryFile, TimestampZone: tsZone, Window: window}); err != nil {
		return usageExit(stderr, err)
	}
	runKey := report.RunKey(c.WorkspaceID, window, dsns.store.Redacted+" repair")
	log := console.NewLogger(console.NewBar(stderr), c.LogFormat, c.LogLevel).With("run_key", runKey)
	ec := c.elido()
	ec.Logger = log
	client, err := elido.New(ec, d.elido...)
	if err != nil {
		return usageExit(stderr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	out, _ := job.Repair(ctx, job.RepairOptions{
		Window: window, Settle: c.Settle, Query: query,
		Store: dsns.store, StoreWrite: storeWrite, Insert: insertSQL, Apply: c.Apply,
		TimestampZone: tsZone,
		Dir:           filepath.Join(c.ReportDir, "repair-"+runKey),
		Lock:          dsns.lock(), WorkspaceID: c.WorkspaceID,
	}, job.Deps{Elido: client, Log: log, Now: d.now}, stdout)
	return out.Code
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
