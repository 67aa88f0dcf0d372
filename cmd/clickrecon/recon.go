package main

import (
	"context"
	"io"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/config"
	"github.com/clickrecon/clickrecon/internal/console"
	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/sources/elido"
)

// cmdRun is "clickrecon run": everything is checked before the first
// request or query, so a usage error exits 2 having touched nothing; then
// job.Run walks the run's stages, the lock and the probe of the store
// first, and its Outcome carries the exit code.
func cmdRun(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	c, setup, err := configureRun(ctx, "run", args, env, stdout, stderr, d)
	if err != nil {
		return usageExit(stderr, err)
	}
	defer setup.dest.Close()
	storeID := setup.dsns.Store.Redacted + " " + setup.query.Name()
	runKey := report.RunKey(c.WorkspaceID, setup.window, storeID)
	bar := console.NewBar(stderr)
	log := console.NewLogger(bar, c.LogFormat, c.LogLevel).With("run_key", runKey)
	if d.workspace != "" {
		log = log.With("workspace", d.workspace)
	}
	slackCfg := c.Slack()
	slackCfg.Logger = log
	notifier, err := alert.New(slackCfg, d.alert...)
	if err != nil {
		return usageExit(stderr, err)
	}
	elidoCfg := c.Elido()
	elidoCfg.Logger = log
	client, err := elido.New(elidoCfg, d.elido...) // ValidateRun checked its configuration
	if err != nil {
		return usageExit(stderr, err)
	}
	o := options(c, setup.window)
	o.WorkspaceID, o.RunKey, o.LegacyStoreID = c.WorkspaceID, runKey, report.StoreID(storeID)
	o.Store, o.Query, o.History = setup.dsns.Store, setup.query, setup.dsns.History
	o.TimestampZone = setup.tsZone
	o.DryRun = c.DryRun
	o.Secrets = c.Secrets(setup.dsns)
	o.Lock = setup.dsns.Lock()
	o.Probe, o.QueryFile, o.HistoryMissing = true, c.StoreQueryFile, setup.dsns.HistoryMissing
	o.Repair, o.StoreWrite, o.RepairInsert = setup.repair, setup.dsns.StoreWrite, setup.repairInsert
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	out, _ := job.Run(ctx, o, job.Deps{Elido: client, Notifier: notifier, Reports: setup.dest, Log: log, Now: d.now,
		Progress: bar, DrillLimit: d.drillLimit, Monitors: setup.mon, Stdout: stdout,
		ProbeFailed: func(err error) { usageExit(stderr, err) }})
	return out.Code
}

// options are the job's settings that run and demo share; the caller adds
// its sources, its key and where results go.
func options(c config.Config, w reconcile.Window) job.Options {
	return job.Options{
		Window:    w,
		Settle:    c.Settle,
		Tolerance: c.Tolerance(),
		Timeout:   c.Timeout,
		Drilldown: c.Drilldown == "auto",
		DrillMax:  c.DrillMax,
		Diagnose:  job.DiagnoseMode(c.Diagnose),
		Retention: c.Retention,
		ReportDir: c.ReportDir,
		ReportURL: c.ReportURL,
		KeepDays:  c.ReportKeepDays,
		Format:    c.Format,
		FailOn:    c.FailOnSeverity(),
	}
}
