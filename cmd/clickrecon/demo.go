package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/demo"
	"github.com/clickrecon/clickrecon/internal/job"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
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
	if c.Serve {
		return serveDemo(ctx, c, loc, stdout, stderr, d.now())
	}
	if c.Port != 0 || c.ClicksFile != "" {
		return usageExit(stderr, errors.New("--port and --clicks go with --serve"))
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

// serveDemo is "clickrecon demo --serve": the simulated Elido API alone,
// on 127.0.0.1, counting the clicks of --clicks FILE (or the demo's own),
// until SIGINT or SIGTERM ends ctx. It prints the variables and the
// command that point a real run, on the user's own store, at it: the way
// to try clickrecon before having an Elido key.
func serveDemo(ctx context.Context, c config, loc *time.Location, stdout, stderr io.Writer, now time.Time) int {
	if c.Port < 0 || c.Port > 65535 {
		return usageExit(stderr, fmt.Errorf("--port must be from 0 (a free port) to 65535, got %d", c.Port))
	}
	source := "the demo's own"
	var clicks []elidotest.Click
	if c.ClicksFile != "" {
		f, err := os.Open(c.ClicksFile)
		if err != nil {
			return usageExit(stderr, fmt.Errorf("--clicks: %w", err))
		}
		clicks, err = demo.ReadClicks(f)
		f.Close()
		if err != nil {
			return usageExit(stderr, fmt.Errorf("--clicks %s: %w", c.ClicksFile, err))
		}
		source = "from " + c.ClicksFile
	} else {
		from, _ := reconcile.ParseDate(demo.From)
		to, _ := reconcile.ParseDate(demo.To)
		clicks, _ = demo.Clicks(reconcile.Window{From: from, To: to, Loc: loc})
	}
	srv, err := elidotest.Serve(fmt.Sprintf("127.0.0.1:%d", c.Port), demo.Workspace, demo.Key, clicks)
	if err != nil {
		return usageExit(stderr, fmt.Errorf("--port %d: %w (pick another port, or 0 for a free one)", c.Port, err))
	}
	defer srv.Close()
	// The days the clicks span, in the run's zone, up to the last that
	// has ended: a run refuses a day that has not.
	first := reconcile.DateOf(clicks[0].TS.In(loc))
	last := reconcile.DateOf(clicks[len(clicks)-1].TS.In(loc))
	if ended := reconcile.DateOf(now.In(loc)).AddDays(-1); last.After(ended) {
		last = ended
	}
	if c.Format == "text" {
		fmt.Fprintf(stdout, "clickrecon demo --serve: a simulated Elido API on %s counting %d clicks (%s), %s to %s in %s.\n\n"+
			"Point clickrecon run at it, with STORE_DSN set to your store (a run with --dry-run posts nothing\n"+
			"to Slack and records no history):\n\n"+
			"  export ELIDO_API_BASE=%s\n"+
			"  export ELIDO_API_KEY=%s\n"+
			"  export ELIDO_WORKSPACE_ID=%s\n"+
			"  export ELIDO_RATE_LIMIT=600 ELIDO_RETENTION_DAYS=0\n"+
			"  clickrecon run --from %s --to %s --tz %s --dry-run\n\n"+
			"It serves until Ctrl-C (SIGINT) or SIGTERM.\n",
			srv.URL(), len(clicks), source, first, last, loc, srv.URL(), demo.Key, demo.Workspace, first, last, loc)
	}
	<-ctx.Done()
	fmt.Fprintln(stderr, "clickrecon demo --serve: stopped")
	return exitOK
}
