// Package tour is what "clickrecon demo" does in the demo's world
// (package demo): the real pipeline run against the simulated Elido API
// and the embedded store, the repair of what it finds and a run after it
// (Run); or the simulated API alone, for a run on the user's own store
// (Serve).
package tour

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/demo"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// Options are the demo's settings: the run's (cmd's configuration, with
// the demo's own defaults), less the window, the sources and the key,
// which the demo's world gives.
type Options struct {
	Run      job.Options
	Loc      *time.Location // the calendar days' zone (RECON_TZ: the demo's)
	Log      *slog.Logger
	Progress job.Progress
	Elido    []elido.Option // for the Elido client (tests replace its clock)
	Now      func() time.Time
}

// Run is "clickrecon demo": it starts the demo's world, runs the job on it
// and prints its summary, then (text only) the Slack message the run
// would send, the repair of the lost clicks with --apply, and a run of the
// repaired store, whose report is written beside the first. It returns
// the exit code of the first run, or 3 when a step of the demo could not
// be taken; the error says why the world or its clients could not be
// set up.
func Run(ctx context.Context, o Options, stdout io.Writer) (int, error) {
	world, err := demo.Start(ctx, o.Loc)
	if err != nil {
		return job.ExitIncomplete, err
	}
	defer world.Close()
	w := world.Window
	runKey := report.RunKey(demo.Workspace, w, "demo")
	log := o.Log.With("run_key", runKey)
	client, err := elido.New(elido.Config{BaseURL: world.Elido.URL(), APIKey: demo.Key, WorkspaceID: demo.Workspace, RatePerMinute: 6000, Logger: log}, o.Elido...)
	if err != nil {
		return job.ExitIncomplete, err
	}
	query, err := store.PresetQuery("events")
	if err != nil {
		return job.ExitIncomplete, err
	}
	// The demo's store is also its STORE_WRITE_DSN.
	storeDSN, err := store.ParseDSN(world.StoreDSN)
	var storeWrite dsn.Target
	if err == nil {
		storeWrite, err = store.ParseWriteDSN(world.StoreDSN)
	}
	if err != nil {
		return job.ExitIncomplete, err
	}

	ctx, cancel := context.WithTimeout(ctx, o.Run.Timeout)
	defer cancel()
	text := o.Run.Format == "text"
	if text {
		fmt.Fprintf(stdout, "clickrecon demo: a simulated Elido API on %s and an embedded SQLite store of %d clicks\n"+
			"(Elido counted %d; the store lost a burst of webhook deliveries on %s and recorded a retried batch twice on %s).\n\n",
			world.Elido.URL(), len(world.StoreClicks), len(world.ElidoClicks), w.From.AddDays(1), w.From.AddDays(2))
	}
	ro := o.Run
	ro.Window = w
	ro.WorkspaceID, ro.RunKey, ro.LegacyStoreID = demo.Workspace, runKey, report.StoreID("demo")
	ro.Store, ro.Query = storeDSN, query
	ro.Retention = 0 // the demo's days are fixed; they never age out of the simulated Elido
	first, _ := job.Run(ctx, ro, job.Deps{Elido: client, Log: log, Now: o.Now, Progress: o.Progress, Stdout: stdout})
	if first.Code == job.ExitIncomplete || !text {
		return first.Code, nil
	}
	fmt.Fprintf(stdout, "\nThe Slack message this run would send:\n\n%s\n", slackMessage(first.Report))
	// clickrecon repair --apply on the same world: the lost burst is put
	// back into the demo's store (its own STORE_WRITE_DSN) and re-counted.
	fmt.Fprintf(stdout, "\nclickrecon repair --apply puts the lost clicks back (STORE_WRITE_DSN is the demo's store):\n\n")
	repaired, _ := job.Repair(ctx, job.RepairOptions{
		Window: w, Settle: ro.Settle, Query: query,
		Store: storeDSN, StoreWrite: storeWrite, Apply: true,
		Dir: storage.RepairDir(ro.ReportDir, runKey),
	}, job.Deps{Elido: client, Log: log, Now: o.Now}, stdout)
	if repaired.Code == job.ExitIncomplete {
		return job.ExitIncomplete, nil
	}
	// The report of the run above still shows the day just repaired as
	// missing; a second run, with a key of its own, writes the report of
	// the repaired store beside it, so that both can be opened.
	ro.RunKey = report.RunKey(demo.Workspace, w, "demo after repair")
	ro.KeepDays = 0 // the first report stays, whatever its age
	ro.FailOn = ""
	// Reports say when they were made to the second: the run after the
	// repair is dated a second after the first at least, so that whatever
	// orders the nights (clickrecon trend) reads it as the later verdict.
	later := func() time.Time { return o.Now().Add(time.Second) }
	after, _ := job.Run(ctx, ro, job.Deps{Elido: client, Log: log, Now: later, Progress: o.Progress, Stdout: io.Discard})
	if after.Code == job.ExitIncomplete {
		return job.ExitIncomplete, nil
	}
	fmt.Fprintf(stdout, "\nAfter the repair the store was reconciled again: %s.\n\n"+
		"Open the reports:\n  before the repair  %s\n  after the repair   %s\n\n"+
		"The demo's simulated API and store are gone now. To try clickrecon run on your own store\n"+
		"without an Elido key, serve the simulated API with: clickrecon demo --serve --clicks FILE\n",
		dayStatuses(after.Report), reportFile(ro.ReportDir, runKey), reportFile(ro.ReportDir, ro.RunKey))
	return first.Code, nil
}

// slackMessage renders the Slack message of the demo's run, whose
// re-check command could only fail once the demo has ended: it names the
// demo's next step instead.
func slackMessage(rep report.Report) string {
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
