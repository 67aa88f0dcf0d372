package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/demo"
	"github.com/clickrecon/clickrecon/internal/job"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// cmdDemo runs the real pipeline against a simulated Elido API on
// loopback and an embedded SQLite store that lost some clicks and
// recorded others twice. It reads no variable but LOG_LEVEL and
// LOG_FORMAT, needs no network and no secret.
func cmdDemo(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	vars := map[string]string{
		"RECON_REPORT_DIR": "clickrecon-demo",
		"RECON_TZ":         demo.Zone,
		"LOG_FORMAT":       "text",
		"LOG_LEVEL":        "warn",
	}
	for _, name := range []string{"LOG_LEVEL", "LOG_FORMAT"} {
		if v, ok := env.Lookup(name); ok {
			vars[name] = v
		}
	}
	c, err := parseArgs(ctx, "demo", args, envconfig.MapLookuper(vars), stdout, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	if err := c.validateCommon(); err != nil {
		return usageExit(stderr, err)
	}
	loc, err := reconcile.LoadZone(c.TZ)
	if err != nil {
		return usageExit(stderr, err)
	}
	world, err := demo.Start(ctx, loc)
	if err != nil {
		fmt.Fprintf(stderr, "clickrecon demo: %v\n", err)
		return exitIncomplete
	}
	defer world.Close()
	w := world.Window
	runKey := report.RunKey(demo.Workspace, w, "demo")
	bar := job.NewBar(stderr)
	log := newLogger(bar, c.LogFormat, c.LogLevel).With("run_key", runKey)
	client, err := elido.New(elido.Config{BaseURL: world.Elido.URL(), APIKey: demo.Key, WorkspaceID: demo.Workspace, RatePerMinute: 6000, Logger: log}, d.elido...)
	if err != nil {
		fmt.Fprintf(stderr, "clickrecon demo: %v\n", err)
		return exitIncomplete
	}
	query, err := store.PresetQuery("events")
	if err != nil {
		fmt.Fprintf(stderr, "clickrecon demo: %v\n", err)
		return exitIncomplete
	}

	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if c.Format == "text" {
		fmt.Fprintf(stdout, "clickrecon demo: a simulated Elido API on %s and an embedded SQLite store of %d clicks\n"+
			"(Elido counted %d; the store lost a burst of webhook deliveries on %s and recorded a retried batch twice on %s).\n\n",
			world.Elido.URL(), len(world.StoreClicks), len(world.ElidoClicks), w.From.AddDays(1), w.From.AddDays(2))
	}
	o := c.options(w)
	o.WorkspaceID, o.RunKey, o.StoreID = demo.Workspace, runKey, report.StoreID("demo")
	o.StoreDSN, o.Query = world.StoreDSN, query
	o.Retention = 0 // the demo's days are fixed; they never age out of the simulated Elido
	jd := job.Deps{Elido: client, Log: log, Now: d.now, Progress: bar}
	code, _ := runJob(ctx, o, jd, c.failOn(), nil, c.Format, true, stdout)
	if code == exitIncomplete || c.Format != "text" {
		return code
	}
	// clickrecon repair --apply on the same world: the lost burst is put
	// back into the demo's store (its own STORE_WRITE_DSN) and re-counted.
	fmt.Fprintf(stdout, "\nclickrecon repair --apply puts the lost clicks back (STORE_WRITE_DSN is the demo's store):\n\n")
	if repairExit(job.Repair(ctx, job.RepairOptions{
		Window: w, Settle: c.Settle, Query: query,
		StoreDSN: world.StoreDSN, StoreWriteDSN: world.StoreDSN, Apply: true,
		Dir: filepath.Join(c.ReportDir, "repair-"+runKey),
	}, job.Deps{Elido: client, Log: log, Now: d.now}, stdout)) == exitIncomplete {
		return exitIncomplete
	}
	return code
}
