package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/cmd/clickrecon/demo"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// cmdDemo runs the real pipeline against a simulated Elido API on
// loopback and an embedded SQLite store that lost some clicks and
// recorded others twice. It reads no variable but LOG_LEVEL and
// LOG_FORMAT (and with --serve RECON_MAX_DAYS and RECON_SETTLE), needs no
// network and no secret.
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
	if c.Serve {
		// The runs it prints read these two from the same environment:
		// its windows must be ones they accept.
		for _, name := range []string{"RECON_MAX_DAYS", "RECON_SETTLE"} {
			if v, ok := env.Lookup(name); ok {
				vars[name] = v
			}
		}
		if c, err = parseArgs(ctx, "demo", args, envconfig.MapLookuper(vars), stdout, stderr); err != nil {
			return usageExit(stderr, err)
		}
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
	bar := newBar(stderr)
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
	// The demo's store is also its STORE_WRITE_DSN.
	storeDSN, err := store.ParseDSN(world.StoreDSN)
	var storeWrite dsn.Target
	if err == nil {
		storeWrite, err = store.ParseWriteDSN(world.StoreDSN)
	}
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
	o.WorkspaceID, o.RunKey, o.LegacyStoreID = demo.Workspace, runKey, report.StoreID("demo")
	o.Store, o.Query = storeDSN, query
	o.Retention = 0 // the demo's days are fixed; they never age out of the simulated Elido
	jd := job.Deps{Elido: client, Log: log, Now: d.now, Progress: bar}
	code, rep := runJob(ctx, o, jd, c.failOn(), nil, c.Format, stdout)
	if code == exitIncomplete || c.Format != "text" {
		return code
	}
	fmt.Fprintf(stdout, "\nThe Slack message this run would send:\n\n%s\n", demoSlack(rep))
	// clickrecon repair --apply on the same world: the lost burst is put
	// back into the demo's store (its own STORE_WRITE_DSN) and re-counted.
	fmt.Fprintf(stdout, "\nclickrecon repair --apply puts the lost clicks back (STORE_WRITE_DSN is the demo's store):\n\n")
	if repairExit(job.Repair(ctx, job.RepairOptions{
		Window: w, Settle: c.Settle, Query: query,
		Store: storeDSN, StoreWrite: storeWrite, Apply: true,
		Dir: filepath.Join(c.ReportDir, "repair-"+runKey),
	}, job.Deps{Elido: client, Log: log, Now: d.now}, stdout)) == exitIncomplete {
		return exitIncomplete
	}
	// The report of the run above still shows the day just repaired as
	// missing; a second run, with a key of its own, writes the report of
	// the repaired store beside it, so that both can be opened.
	o.RunKey = report.RunKey(demo.Workspace, w, "demo after repair")
	o.KeepDays = 0 // the first report stays, whatever its age
	after, rep2 := runJob(ctx, o, job.Deps{Elido: client, Log: log, Now: d.now, Progress: bar}, "", nil, c.Format, io.Discard)
	if after == exitIncomplete {
		return exitIncomplete
	}
	fmt.Fprintf(stdout, "\nAfter the repair the store was reconciled again: %s.\n\n"+
		"Open the reports:\n  before the repair  %s\n  after the repair   %s\n\n"+
		"The demo's simulated API and store are gone now. To try clickrecon run on your own store\n"+
		"without an Elido key, serve the simulated API with: clickrecon demo --serve --clicks FILE\n",
		dayStatuses(rep2), reportFile(c.ReportDir, runKey), reportFile(c.ReportDir, o.RunKey))
	return code
}

// demoSlack renders the Slack message of the demo's run, whose re-check
// command could only fail once the demo has ended: it names the demo's
// next step instead.
func demoSlack(rep report.Report) string {
	md := alert.RenderMarkdown(alert.Render(rep, nil))
	return runCommand.ReplaceAllString(md, "clickrecon demo --serve   # then clickrecon run on your own store, as it prints")
}

// runCommand is the re-check of a rendered message: one command a line,
// each over a day (--date) or a range (--from, --to).
var runCommand = regexp.MustCompile(`clickrecon run (?:--date \S+|--from \S+ --to \S+) --tz \S+(?:\nclickrecon run (?:--date \S+|--from \S+ --to \S+) --tz \S+)*`)

// dayStatuses lists each day of rep with its status: 2026-10-23 match, ….
func dayStatuses(rep report.Report) string {
	var parts []string
	for _, d := range rep.Days {
		parts = append(parts, d.Date+" "+string(d.Status))
	}
	return strings.Join(parts, ", ")
}

// reportFile is the report.html of the run runKey under dir, a folder or
// an object-storage URL.
func reportFile(dir, runKey string) string {
	if strings.Contains(dir, "://") {
		return strings.TrimSuffix(dir, "/") + "/" + runKey + "/report.html"
	}
	return filepath.Join(dir, runKey, "report.html")
}

// trialWindows splits the days first..last that a run accepts today
// (those that have ended: up to the day before today) into windows of at
// most maxDays days, oldest first; none when no such day has ended.
func trialWindows(first, last, today reconcile.Date, maxDays int) []reconcile.Window {
	if ended := today.AddDays(-1); last.After(ended) {
		last = ended
	}
	var out []reconcile.Window
	for from := first; !from.After(last); from = from.AddDays(maxDays) {
		to := from.AddDays(maxDays - 1)
		if to.After(last) {
			to = last
		}
		out = append(out, reconcile.Window{From: from, To: to})
	}
	return out
}

// serveDemo is "clickrecon demo --serve": the simulated Elido API alone,
// on 127.0.0.1, counting the clicks of --clicks FILE (or the demo's own),
// until SIGINT or SIGTERM ends ctx. It prints the variables and the
// commands that point a real run, on the user's own store, at it: the
// way to try clickrecon before having an Elido key. The zone is exported
// as RECON_TZ, so that every command after them (a repair too) reads the
// days alike, and the days the clicks span are given as the windows a
// run accepts: the days that have ended, at most RECON_MAX_DAYS a run.
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
	first := reconcile.DateOf(clicks[0].TS.In(loc))
	last := reconcile.DateOf(clicks[len(clicks)-1].TS.In(loc))
	today := reconcile.DateOf(now.In(loc))
	if c.Format == "text" {
		fmt.Fprintf(stdout, "clickrecon demo --serve: a simulated Elido API on %s counting %d clicks (%s), %s to %s in %s.\n\n"+
			"Point clickrecon run at it, with STORE_DSN set to your store (a run with --dry-run posts nothing\n"+
			"to Slack and records no history):\n\n"+
			"  export ELIDO_API_BASE=%s\n"+
			"  export ELIDO_API_KEY=%s\n"+
			"  export ELIDO_WORKSPACE_ID=%s\n"+
			"  export ELIDO_RATE_LIMIT=600 ELIDO_RETENTION_DAYS=0\n"+
			"  export RECON_TZ=%s\n",
			srv.URL(), len(clicks), source, first, last, loc, srv.URL(), demo.Key, demo.Workspace, loc)
		windows := trialWindows(first, last, today, c.MaxDays)
		for _, w := range windows {
			fmt.Fprintf(stdout, "  clickrecon run --from %s --to %s --dry-run\n", w.From, w.To)
		}
		fmt.Fprintln(stdout)
		if len(windows) > 1 {
			fmt.Fprintf(stdout, "One run per %d days: a run covers at most RECON_MAX_DAYS=%d.\n", c.MaxDays, c.MaxDays)
		}
		if !last.Before(today) {
			// A run refuses a day that has not ended; its clicks may
			// still arrive late.
			fmt.Fprintf(stdout, "The clicks of %s and later are left out: %s has not ended in %s. From %s 00:00 a run\n"+
				"can check it (clickrecon run --date %s --dry-run), provisional for RECON_SETTLE (%s) after.\n",
				today, today, loc, today.AddDays(1), today, c.Settle)
		}
		fmt.Fprintln(stdout, "It serves until Ctrl-C (SIGINT) or SIGTERM.")
	}
	<-ctx.Done()
	fmt.Fprintln(stderr, "clickrecon demo --serve: stopped")
	return exitOK
}
