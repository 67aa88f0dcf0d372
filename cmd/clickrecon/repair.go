package main

import (
	"context"
	"io"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/console"
	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/storage"
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
	window, dsns, err := c.ValidateRun(d.now())
	if err != nil {
		return usageExit(stderr, err)
	}
	insertSQL, storeWrite, err := c.ValidateRepair()
	if err != nil {
		return usageExit(stderr, err)
	}
	query, err := store.LoadQuery(c.StorePreset, "", "") // events: ValidateRepair refuses the others
	if err != nil {
		return usageExit(stderr, err)
	}
	tsZone, err := store.TimestampZone(c.StoreTSZone)
	if err != nil {
		return usageExit(stderr, err)
	}
	if err := store.CheckZone(dsns.Store, query, tsZone, true); err != nil {
		return usageExit(stderr, err)
	}
	// As run does, the store is probed before Elido is asked anything; with
	// --apply, job.Repair checks STORE_WRITE_DSN before its first request.
	if err := job.ProbeStore(ctx, c.Timeout, job.StoreProbe{Store: dsns.Store, Query: query, QueryFile: c.StoreQueryFile, TimestampZone: tsZone, Window: window}); err != nil {
		return usageExit(stderr, err)
	}
	runKey := report.RunKey(c.WorkspaceID, window, dsns.Store.Redacted+" repair")
	log := console.NewLogger(console.NewBar(stderr), c.LogFormat, c.LogLevel).With("run_key", runKey)
	ec := c.Elido()
	ec.Logger = log
	client, err := elido.New(ec, d.elido...)
	if err != nil {
		return usageExit(stderr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	out, _ := job.Repair(ctx, job.RepairOptions{
		Window: window, Settle: c.Settle, Query: query,
		Store: dsns.Store, StoreWrite: storeWrite, Insert: insertSQL, Apply: c.Apply,
		TimestampZone: tsZone,
		Dir:           storage.RepairDir(c.ReportDir, runKey),
		Lock:          dsns.Lock(), WorkspaceID: c.WorkspaceID,
	}, job.Deps{Elido: client, Log: log, Now: d.now}, stdout)
	return out.Code
}
