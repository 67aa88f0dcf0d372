package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/safehttp"
	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/job/runlock"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// cmdRun is "clickrecon run": everything is checked before the first
// request or query, so a usage error exits 2 having touched nothing, and
// the store is probed before the first request to Elido.
func cmdRun(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	c, setup, err := configureRun(ctx, "run", args, env, stdout, stderr, d)
	if err != nil {
		return usageExit(stderr, err)
	}
	defer setup.dest.Close()
	window, query, tsZone, mon, dest, repairInsert := setup.window, setup.query, setup.tsZone, setup.mon, setup.dest, setup.repairInsert
	storeID := setup.dsns.store.Redacted + " " + query.Name()
	runKey := report.RunKey(c.WorkspaceID, window, storeID)
	bar := newBar(stderr)
	log := newLogger(bar, c.LogFormat, c.LogLevel).With("run_key", runKey)
	slackCfg := c.slack()
	slackCfg.Logger = log
	notifier, err := alert.New(slackCfg, d.alert...)
	if err != nil {
		return usageExit(stderr, err)
	}
	o := c.options(window)
	o.WorkspaceID, o.RunKey, o.LegacyStoreID = c.WorkspaceID, runKey, report.StoreID(storeID)
	o.Store, o.Query, o.History = setup.dsns.store, query, setup.dsns.history
	o.TimestampZone = tsZone
	o.DryRun = c.DryRun
	o.Secrets = c.secrets(setup.dsns)
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()

	// The lock comes first, so that two runs that meet the same broken
	// store tell it once, under the lock, as they tell anything else. A
	// run refused by the lock reports nothing to monitoring: the run that
	// holds the lock does, and a ping of ours would say it failed.
	lock, lockErr, refused := takeLock(ctx, log, c, setup.dsns.lock(), stdout, "run")
	if refused {
		return exitIncomplete
	}
	defer releaseLock(log, lock)
	var held func(context.Context) error
	if lock != nil {
		held = lock.Held
	}
	o.Unlocked = lockErr != nil
	// The store and the history are probed before Elido is asked for
	// anything: a query that does not fit exits 2 at once, and Slack and
	// monitoring hear of it as of any failure a run meets (a night that
	// broke must not be a silent one). When the lock lives in the database
	// the probe refused, it could not be taken: the notice goes out
	// without it.
	if fs := probeSources(ctx, c, setup); len(fs) > 0 {
		code := usageExit(stderr, failuresErr(fs))
		o.Probed = fs
		job.Run(ctx, o, job.Deps{Notifier: notifier, Log: log, Now: d.now, Held: held}) // it only ends: what failed is fs
		mon.Finish(ctx, log, c.WorkspaceID, code, report.Report{}, time.Now(), 0)
		return code
	}
	if lockErr != nil {
		log.Error("the run lock could not be taken: nothing will be posted or recorded", "err", lockErr)
	}
	elidoCfg := c.elido()
	elidoCfg.Logger = log
	client, err := elido.New(elidoCfg, d.elido...)
	if err != nil {
		return usageExit(stderr, err)
	}
	started := time.Now()
	mon.Start(ctx, log)
	o.Repair, o.StoreWrite, o.RepairInsert = setup.repair, setup.dsns.storeWrite, repairInsert
	jd := job.Deps{Elido: client, Notifier: notifier, Reports: dest, Log: log, Now: d.now, Progress: bar, DrillLimit: d.drillLimit, Held: held}
	code, rep := runJob(ctx, o, jd, c.failOn(), lockErr, c.Format, stdout)
	mon.Finish(ctx, log, c.WorkspaceID, code, rep, time.Now(), time.Since(started))
	return code
}

// takeLock takes the workspace's run lock in the database on names
// (dsns.lock: a PostgreSQL advisory lock, a MySQL named lock, or a lock
// file beside the SQLite history or store; zero: no lock). While another
// run or repair holds it, this one is refused (exit 3: the CronJob retries
// it later) and does nothing else; stdout says so, naming what may hold it
// (who). A lock that cannot be taken at all is returned as lockErr, for
// the caller to decide. lock is nil when there is none; the run checks it
// is still held before it posts, records or inserts anything.
func takeLock(ctx context.Context, log *slog.Logger, c config, on dsn.Target, stdout io.Writer, who string) (lock *runlock.Lock, lockErr error, refused bool) {
	if on.IsZero() {
		log.Debug("no run lock: no database to lock")
		return nil, nil, false
	}
	lock, err := runlock.Take(ctx, on, c.WorkspaceID)
	switch {
	case errors.Is(err, runlock.ErrLocked):
		log.Error("another clickrecon "+who+" of this workspace holds the lock; this one does nothing and exits 3", "workspace_id", c.WorkspaceID)
		if c.Format == "text" {
			fmt.Fprintf(stdout, "clickrecon: another %s of workspace %s is in progress (it holds the lock); nothing was done\n", who, c.WorkspaceID)
		}
		return nil, nil, true
	case err != nil:
		return nil, err, false
	}
	log.Debug("run lock taken", "lock", lock.String())
	return lock, nil, false
}

// releaseLock releases lock, if the run has one.
func releaseLock(log *slog.Logger, lock *runlock.Lock) {
	if lock == nil {
		return
	}
	if err := lock.Release(); err != nil {
		log.Warn("the run lock was not released cleanly (it ends with the connection)", "err", err)
	}
}

// runJob runs the pipeline, chooses the exit code from its Outcome and
// prints the summary on stdout. run and demo both end here (the demo then
// prints the Slack message the run would send). lockErr is why the run
// lock could not be taken, if it could not: a failure of the run like
// the others.
func runJob(ctx context.Context, o job.Options, d job.Deps, failOn reconcile.Severity, lockErr error,
	format string, stdout io.Writer) (int, report.Report) {
	started := d.Now()
	out, err := job.Run(ctx, o, d)
	out = out.Failed(job.PartLock, lockErr)
	code := exitCode(out, failOn)
	out.Finished(d.Log, code, d.Now().Sub(started))
	if err != nil {
		return code, out.Report // the summary would name a report that is not there
	}
	if err := job.PrintSummary(stdout, format, out.Report, out.Dir); err != nil {
		d.Log.Error("summary not printed", "err", err)
		return exitIncomplete, out.Report
	}
	return code, out.Report
}

// exitCode maps a run's Outcome to the exit codes of docs/contract.md, in one place: an
// interrupted run or a report not stored is incomplete (3); a failure a
// retry cannot mend is a usage error (2), any other failure incomplete
// (3); else gaps at --fail-on (1), or 0.
func exitCode(out job.Outcome, failOn reconcile.Severity) int {
	if out.Interrupted != nil {
		return exitIncomplete
	}
	// Elido redirecting to another origin answers the same way every
	// time: ELIDO_API_BASE names the wrong place.
	if errors.Is(out.Err(job.PartElido), safehttp.ErrRedirect) {
		return exitUsage
	}
	if out.Err(job.PartReport) != nil {
		return exitIncomplete
	}
	for _, f := range out.Failures {
		if needsFixing(f.Err) {
			return exitUsage
		}
	}
	if len(out.Failures) > 0 {
		return exitIncomplete
	}
	if failing(out.Report, failOn) {
		return exitGaps
	}
	return exitOK
}

// failing reports whether rep has a gap at least as severe as failOn
// (--fail-on; "" for none): exit 1, for a run and for a merge. A gap is a
// settled day by definition; a merged shard's days may not say so.
func failing(rep report.Report, failOn reconcile.Severity) bool {
	if failOn == "" {
		return false
	}
	for _, d := range rep.Days {
		if d.IsGap() && d.Severity.AtLeast(failOn) {
			return true
		}
	}
	return false
}

// needsFixing reports whether err is one a retry cannot mend, found only
// once the run talked to its sources: an API key that is revoked or lacks
// its scope, a workspace or base URL that does not exist, a database that
// refuses the DSN's role, password or name, a store query that does not
// fit the database, a history that was never migrated, a Slack webhook,
// token or channel that is wrong.
func needsFixing(err error) bool {
	var ae *elido.APIError
	if errors.As(err, &ae) {
		switch ae.Status {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			return true
		}
	}
	return errors.Is(err, store.ErrBadQuery) || errors.Is(err, store.ErrRefused) ||
		errors.Is(err, history.ErrNotMigrated) || errors.Is(err, alert.ErrMisconfigured)
}

// options are the job's settings that run and demo share; the caller adds
// its sources, its key and where results go.
func (c config) options(w reconcile.Window) job.Options {
	return job.Options{
		Window:    w,
		Settle:    c.Settle,
		Tolerance: c.tolerance(),
		Timeout:   c.Timeout,
		Drilldown: c.Drilldown == "auto",
		DrillMax:  c.DrillMax,
		Diagnose:  job.DiagnoseMode(c.Diagnose),
		Retention: c.Retention,
		ReportDir: c.ReportDir,
		ReportURL: c.ReportURL,
		KeepDays:  c.ReportKeepDays,
	}
}
