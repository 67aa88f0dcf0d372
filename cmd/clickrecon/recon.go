package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"text/tabwriter"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/monitor"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// cmdRun is "clickrecon run": everything is checked before the first
// request or query, so a usage error exits 2 having touched nothing.
func cmdRun(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	c, err := parseArgs(ctx, "run", args, env, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	s, err := c.validateRun(d.now())
	if err != nil {
		return usageExit(stderr, err)
	}
	query, err := loadQuery(c)
	if err != nil {
		return usageExit(stderr, err)
	}
	storeID := store.RedactDSN(c.StoreDSN) + " " + query.Name()
	runKey := report.RunKey(c.WorkspaceID, s.window, storeID)
	bar := newProgress(stderr)
	log := newLogger(bar, c.LogFormat, c.LogLevel).With("run_key", runKey)
	client, err := elido.New(elido.Config{
		BaseURL:       c.APIBase,
		APIKey:        c.APIKey,
		WorkspaceID:   c.WorkspaceID,
		RatePerMinute: c.RateLimit,
		Logger:        log,
	}, d.elido...)
	if err != nil {
		return usageExit(stderr, err)
	}
	slackCfg := c.slack()
	slackCfg.Logger = log
	notifier, err := alert.New(slackCfg, d.alert...)
	if err != nil {
		return usageExit(stderr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()

	j := c.job(s, d, log, bar)
	j.client, j.query, j.workspaceID, j.runKey, j.storeID = client, query, c.WorkspaceID, runKey, report.StoreID(storeID)
	j.notifier, j.dryRun = notifier, c.DryRun
	// A run refused by the lock reports nothing to monitoring: the run
	// that holds the lock does, and a ping of ours would say it failed.
	release, refused := j.lock(ctx, c, stdout)
	if refused {
		return exitIncomplete
	}
	defer release()
	started := time.Now()
	if s.health != nil {
		if err := s.health.Start(context.WithoutCancel(ctx)); err != nil {
			log.Warn("healthcheck start ping failed", "healthcheck", s.health.String(), "err", err)
		}
	}
	code, rep := j.opened(ctx, c, stdout)
	j.monitor(ctx, s, code, rep, time.Since(started))
	return code
}

// lock takes the workspace's advisory lock. A second run of the same
// workspace is refused (exit 3: the CronJob retries it later) and does
// nothing else.
func (j *job) lock(ctx context.Context, c config, stdout io.Writer) (release func(), refused bool) {
	release = func() {}
	dsn := c.lockDSN()
	if dsn == "" {
		j.log.Debug("no run lock: no database to lock")
		return release, false
	}
	unlock, err := store.Lock(ctx, dsn, c.WorkspaceID)
	switch {
	case errors.Is(err, store.ErrLocked):
		j.log.Error("another clickrecon run of this workspace holds the lock; this one does nothing and exits 3", "workspace_id", c.WorkspaceID)
		if c.Format == "text" {
			fmt.Fprintf(stdout, "clickrecon: another run of workspace %s is in progress (it holds the lock); nothing was done\n", c.WorkspaceID)
		}
		return release, true
	case err != nil:
		// The database is unreachable: the run goes on to report what it
		// can, but posts nothing and records nothing, which is what the
		// lock protects, and exits 3.
		j.log.Error("the run lock could not be taken: nothing will be posted or recorded", "err", err)
		j.lockErr = err
		return release, false
	}
	return func() {
		if err := unlock(); err != nil {
			j.log.Warn("the run lock was not released cleanly (it ends with the connection)", "err", err)
		}
	}, false
}

// opened opens the store and the history and runs the job.
func (j job) opened(ctx context.Context, c config, stdout io.Writer) (int, *report.Report) {
	st, err := store.Open(ctx, c.StoreDSN)
	if err != nil {
		j.storeErr = err
	} else {
		defer st.Close()
		j.store = st
	}
	if c.HistoryDSN != "" {
		h, err := history.Open(ctx, c.HistoryDSN)
		if err != nil {
			j.historyErr = err
		} else {
			defer h.Close()
			j.history = h
		}
	}
	code, rep := j.run(ctx, stdout)
	return code, &rep
}

// monitor reports the run's outcome to the Pushgateway and the
// healthcheck, when they are set. Their failures are logged and never
// change the exit code; they run even after SIGTERM, briefly.
func (j job) monitor(ctx context.Context, s settings, code int, rep *report.Report, took time.Duration) {
	ctx = context.WithoutCancel(ctx)
	m := monitor.Metrics{Finished: time.Now(), Duration: took, ExitCode: code}
	summary := fmt.Sprintf("exit %d", code)
	if rep != nil && rep.RunKey != "" {
		m.DaysChecked = rep.Coverage.Days
		m.DaysDiscrepant = rep.Coverage.Missing + rep.Coverage.Surplus
		m.DaysUnverifiable = rep.Coverage.Unverifiable
		summary = fmt.Sprintf("exit %d: %s %s..%s %s, %d days, %d gaps, %d unverifiable, delta %+d, run %s",
			code, rep.Status, rep.Window.From, rep.Window.To, rep.Window.TZ, m.DaysChecked, m.DaysDiscrepant, m.DaysUnverifiable, rep.Totals.Delta, rep.RunKey)
	}
	if s.push != nil {
		if err := s.push.Push(ctx, j.workspaceID, m); err != nil {
			j.log.Warn("pushgateway push failed", "pushgateway", s.push.String(), "err", err)
		}
	}
	if s.health != nil {
		if err := s.health.Finish(ctx, code, summary); err != nil {
			j.log.Warn("healthcheck ping failed", "healthcheck", s.health.String(), "err", err)
		}
	}
}

// job returns a job with the settings run and demo share; the caller adds
// its sources, its key and where results go.
func (c config) job(s settings, d deps, log *slog.Logger, bar *progress) job {
	return job{
		settings:  s,
		settle:    c.Settle,
		timeout:   c.Timeout,
		drilldown: c.Drilldown == "auto",
		drillMax:  c.DrillMax,
		retention: c.Retention,
		reportDir: c.ReportDir,
		format:    c.Format,
		log:       log,
		bar:       bar,
		now:       d.now,
	}
}

// loadQuery returns the store query: STORE_QUERY_FILE when set, else the
// preset.
func loadQuery(c config) (store.Query, error) {
	if c.StoreQueryFile == "" {
		return store.PresetQuery(c.StorePreset)
	}
	b, err := os.ReadFile(c.StoreQueryFile)
	if err != nil {
		return store.Query{}, fmt.Errorf("STORE_QUERY_FILE: %w", err)
	}
	q, err := store.CustomQuery(string(b))
	if err != nil {
		return store.Query{}, fmt.Errorf("STORE_QUERY_FILE %s: %w", c.StoreQueryFile, err)
	}
	return q, nil
}

// job is one reconciliation of a window: read both sides, compare, write
// the report, say what was found. run and demo both end here.
type job struct {
	client      *elido.Client
	notifier    *alert.Notifier  // nil: no Slack
	history     *history.History // nil: no history
	historyErr  error            // why HISTORY_DSN could not be opened
	lockErr     error            // why the run lock could not be taken
	dryRun      bool             // no Slack, no history writes
	showSlack   bool             // print the Slack message (the demo)
	store       *store.Store
	storeErr    error // why the store could not be opened
	query       store.Query
	workspaceID string
	runKey      string // report.RunKey of the workspace, window and store
	storeID     string // report.StoreID of the store and query
	settings
	settle    time.Duration
	timeout   time.Duration
	drilldown bool // --drilldown auto
	drillMax  int  // RECON_DRILLDOWN_MAX_REQUESTS
	retention int  // ELIDO_RETENTION_DAYS; 0: no limit
	reportDir string
	format    string
	log       *slog.Logger // carries the run key
	bar       *progress
	now       clock
}

// progressDays is the window length past which each day's count is
// logged as it is read, so a long backfill shows its progress.
const progressDays = 7

// elidoChunkDays bounds the days fetched in one /timeseries and /summary
// pair: a long backfill is read in pieces, so a disagreement between the
// two, or a failed request, costs only its own piece.
const elidoChunkDays = 31

func (j job) run(ctx context.Context, stdout io.Writer) (int, report.Report) {
	started := j.now()
	w := j.window
	log := j.log
	log.Info("run started", "workspace_id", j.workspaceID, "from", w.From.String(), "to", w.To.String(),
		"tz", w.Loc.String(), "days", w.Len())

	api, summaries, apiErr := j.readElido(ctx, log)
	local, localLinks, seenLinks, storeErr := j.readStore(ctx, log, api)

	res := reconcile.Compare(reconcile.Input{
		Window:    w,
		Now:       j.now(),
		Settle:    j.settle,
		Tolerance: j.tolerance,
		API:       api,
		Local:     local,
		Summaries: summaries,
	})
	drill := report.Drilldown{Mode: drillOff}
	if !j.drilldown || ctx.Err() != nil {
		res = reconcile.Explain(res, nil, w.Loc) // the findings across days need no drill-down
	} else {
		// The drill-down is the optional part: it stops early enough to
		// leave the report, Slack and the history time to finish, so a
		// slow drill-down never costs the night's alert.
		dctx, cancel := context.WithDeadline(ctx, drillDeadline(ctx, j.timeout))
		var details map[reconcile.Date]reconcile.DayDetail
		details, drill = j.drill(dctx, log, res, localLinks, seenLinks)
		stopped := dctx.Err() != nil && ctx.Err() == nil
		cancel()
		res = reconcile.Explain(res, details, w.Loc)
		if stopped {
			log.Warn("drill-down stopped at its time limit")
			res.Findings = append(res.Findings, reconcile.Finding{Kind: reconcile.FindingDrilldownGap,
				Message: "the drill-down stopped at its time limit (RECON_TIMEOUT less a fifth kept for the report and Slack): what it had not read yet is missing from the links, countries and hours above"})
		}
	}
	interrupted := interruption(ctx, j.timeout)
	rep := report.New(res, w, report.Meta{
		RunKey:      j.runKey,
		WorkspaceID: j.workspaceID,
		StoreID:     j.storeID,
		GeneratedAt: j.now(),
		Interrupted: interrupted,
		Requests:    j.client.Requests(),
		Drilldown:   drill,
	})
	j.bar.Done()
	historyErr := cmpErr(j.lockErr, j.revisions(ctx, log, &rep, interrupted))
	dir, err := report.Write(j.reportDir, rep)
	if err != nil {
		log.Error("report not written", "err", err)
		return exitIncomplete, rep
	}
	log.Info("report written", "report", dir)
	slackErr := j.notify(ctx, log, rep, interrupted, historyErr)
	historyErr = cmpErr(historyErr, j.record(ctx, log, rep, interrupted))
	code := j.exitCode(res, interrupted, apiErr, storeErr, historyErr, slackErr)
	log.Info("run finished", "status", rep.Status, "exit_code", code, "report", dir,
		"days", rep.Coverage.Days, "missing", rep.Coverage.Missing, "surplus", rep.Coverage.Surplus,
		"provisional", rep.Coverage.Provisional, "unverifiable", rep.Coverage.Unverifiable,
		"api", rep.Totals.API, "local", rep.Totals.Local, "delta", rep.Totals.Delta,
		"requests", rep.Requests, "duration_ms", j.now().Sub(started).Milliseconds())
	if err := printSummary(stdout, j.format, rep, dir); err != nil {
		log.Error("summary not printed", "err", err)
		return exitIncomplete, rep
	}
	if j.showSlack && j.format == "text" {
		fmt.Fprintf(stdout, "\nThe Slack message this run would send:\n\n%s\n", alert.RenderMarkdown(alert.Render(rep, nil)))
	}
	return code, rep
}

// revisions adds to the report the days whose Elido count changed since an
// earlier run (the provider revised it), before the report is written. It
// returns the history's error, if any: without a readable history the run
// posts nothing, so that it cannot repeat an alert.
func (j job) revisions(ctx context.Context, log *slog.Logger, rep *report.Report, interrupted string) error {
	if j.historyErr != nil {
		log.Error("history not opened: nothing will be posted to Slack", "err", j.historyErr)
		return j.historyErr
	}
	if j.history == nil || interrupted != "" {
		return nil
	}
	found, err := j.history.Revisions(ctx, *rep)
	if err != nil {
		log.Error("history not read: nothing will be posted to Slack", "err", err)
		return err
	}
	rep.Findings = append(rep.Findings, found...)
	return nil
}

// notify posts what Slack should hear of the report, once. It posts
// nothing on a dry run, after an interruption (no half-finished post), or
// when the history that de-duplicates alerts could not be read.
func (j job) notify(ctx context.Context, log *slog.Logger, rep report.Report, interrupted string, historyErr error) error {
	switch {
	case j.notifier == nil:
		return nil
	case j.dryRun:
		log.Info("slack skipped: --dry-run")
		return nil
	case interrupted != "":
		log.Warn("slack skipped: the run was stopped")
		return nil
	case historyErr != nil:
		return nil
	}
	csv, err := report.CSV(rep)
	if err != nil {
		return err
	}
	out, err := j.notifier.Send(ctx, rep, csv, j.history)
	if err != nil {
		log.Error("slack failed; the report is on disk", "err", err)
		return err
	}
	log.Info("slack", "outcome", out)
	return nil
}

// record writes the run to the history, all or nothing; never on a dry
// run or after an interruption.
func (j job) record(ctx context.Context, log *slog.Logger, rep report.Report, interrupted string) error {
	if j.history == nil || j.dryRun || interrupted != "" || j.lockErr != nil {
		return nil
	}
	if err := j.history.RecordRun(ctx, rep); err != nil {
		log.Error("run not recorded in the history", "err", err)
		return err
	}
	return nil
}

// oldestKept is the oldest day Elido can still be asked for, under
// ELIDO_RETENTION_DAYS: today less the retention, plus one day of margin,
// since Elido may purge by the hour or count its days in another zone.
func (j job) oldestKept() (reconcile.Date, bool) {
	if j.retention <= 0 {
		return reconcile.Date{}, false
	}
	return reconcile.DateOf(j.now().In(j.window.Loc)).AddDays(-j.retention + 1), true
}

// drillDeadline is when the drill-down must stop: the run's deadline less
// a fifth of RECON_TIMEOUT (at most 5 minutes) kept for what follows it.
func drillDeadline(ctx context.Context, timeout time.Duration) time.Time {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(timeout)
	}
	return deadline.Add(-min(timeout/5, 5*time.Minute))
}

// readElido reads Elido's daily buckets and the matching /summary totals,
// a chunk at a time. A chunk that cannot be read leaves its days unknown;
// the first such error is returned for the exit code.
func (j job) readElido(ctx context.Context, log *slog.Logger) (map[reconcile.Date]reconcile.Reading, []reconcile.SummaryCheck, error) {
	api := map[reconcile.Date]reconcile.Reading{}
	var summaries []reconcile.SummaryCheck
	var firstErr error
	started := time.Now()
	tz := j.window.Loc.String()
	first := j.window.From
	if oldest, ok := j.oldestKept(); ok {
		// Elido keeps a plan's worth of days; older ones it cannot count,
		// whatever it answers for them.
		for d := first; d.Before(oldest) && !d.After(j.window.To); d = d.AddDays(1) {
			api[d] = reconcile.Unknown(fmt.Errorf("the day is older than Elido keeps analytics (ELIDO_RETENTION_DAYS=%d): it cannot be reconciled", j.retention))
			first = d.AddDays(1)
		}
	}
	chunks := (reconcile.Window{From: first, To: j.window.To}.Len() + elidoChunkDays - 1) / elidoChunkDays
	for from, i := first, 0; !from.After(j.window.To); from, i = from.AddDays(elidoChunkDays), i+1 {
		j.bar.Step("elido", i, chunks)
		to := from.AddDays(elidoChunkDays - 1)
		if to.After(j.window.To) {
			to = j.window.To
		}
		days, checks, err := j.readElidoChunk(ctx, log, from, to, tz)
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			log.Error("elido read failed", "from", from.String(), "to", to.String(), "err", err)
			for d := from; !d.After(to); d = d.AddDays(1) {
				api[d] = reconcile.Unknown(err)
			}
			continue
		}
		for _, dc := range days {
			api[dc.Date] = reconcile.Known(dc.Clicks)
		}
		summaries = append(summaries, checks...)
	}
	log.Info("elido read", "days", len(api), "requests", j.client.Requests(), "duration_ms", time.Since(started).Milliseconds())
	return api, summaries, firstErr
}

// readElidoChunk reads one chunk's /timeseries and /summary. When they
// disagree it reads both once more: a click that landed between the two
// requests is not an inconsistency. When they still disagree it asks
// /summary for each day, so that only the days whose own summary
// disagrees with their bucket are left unverifiable, not the whole chunk.
// A disagreement that persists is left for Compare to report.
func (j job) readElidoChunk(ctx context.Context, log *slog.Logger, from, to reconcile.Date, tz string) ([]elido.DayCount, []reconcile.SummaryCheck, error) {
	var days []elido.DayCount
	var sum elido.Summary
	var total int64
	for attempt := 0; attempt < 2; attempt++ {
		var err error
		days, err = j.client.Timeseries(ctx, from, to, tz)
		if err != nil {
			return nil, nil, err
		}
		sum, err = j.client.Summary(ctx, from, to, tz)
		if err != nil {
			return nil, nil, err
		}
		total = 0
		for _, d := range days {
			total += d.Clicks
		}
		if total == sum.Clicks {
			return days, []reconcile.SummaryCheck{{From: from, To: to, Clicks: sum.Clicks}}, nil
		}
	}
	whole := []reconcile.SummaryCheck{{From: from, To: to, Clicks: sum.Clicks}}
	if from == to {
		return days, whole, nil
	}
	log.Warn("elido /summary disagrees with /timeseries; checking each day", "from", from.String(), "to", to.String(),
		"summary", sum.Clicks, "timeseries", total)
	var perDay []reconcile.SummaryCheck
	for d := from; !d.After(to); d = d.AddDays(1) {
		s, err := j.client.Summary(ctx, d, d, tz)
		if err != nil {
			log.Warn("elido /summary for one day failed; the whole range stays unverifiable", "date", d.String(), "err", err)
			return days, whole, nil
		}
		perDay = append(perDay, reconcile.SummaryCheck{From: d, To: d, Clicks: s.Clicks})
	}
	return days, perDay, nil
}

// readStore counts each day in the store, in all and per link. It keeps
// the per-link counts only of the days whose total differs from Elido's
// (the drill-down's candidates), and the clicks per link over the whole
// window (the fallback's link list), so a long backfill of a workspace with
// many links does not hold every day's links in memory. A day whose query
// fails is left unknown; the first error is returned for the exit code.
func (j job) readStore(ctx context.Context, log *slog.Logger, api map[reconcile.Date]reconcile.Reading) (
	local map[reconcile.Date]reconcile.Reading, links map[reconcile.Date]map[string]int64, seen map[string]int64, firstErr error) {
	local = map[reconcile.Date]reconcile.Reading{}
	links = map[reconcile.Date]map[string]int64{}
	seen = map[string]int64{}
	if j.storeErr != nil {
		log.Error("store not opened", "err", j.storeErr)
		for _, d := range j.window.Days() {
			local[d] = reconcile.Unknown(j.storeErr)
		}
		return local, links, seen, j.storeErr
	}
	started := time.Now()
	days := j.window.Days()
	for i, d := range days {
		j.bar.Step("store", i, len(days))
		counts, err := j.store.Counts(ctx, j.query, d, j.window.Loc)
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			log.Error("store read failed", "date", d.String(), "err", err)
			local[d] = reconcile.Unknown(err)
			continue
		}
		local[d] = reconcile.Known(counts.Total)
		if a, ok := api[d]; ok && a.Err == nil && a.Clicks != counts.Total {
			links[d] = counts.Links
		}
		for id, n := range counts.Links {
			seen[id] += n
		}
		if len(days) > progressDays {
			log.Info("store day counted", "date", d.String(), "day", i+1, "of", len(days), "clicks", counts.Total)
		}
	}
	j.bar.Step("store", len(days), len(days))
	log.Info("store read", "days", len(local), "links", len(seen), "duration_ms", time.Since(started).Milliseconds())
	return local, links, seen, firstErr
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// interruption says why the run stopped early, or "" if it did not.
func interruption(ctx context.Context, timeout time.Duration) string {
	switch {
	case ctx.Err() == nil:
		return ""
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return fmt.Sprintf("the run's deadline (RECON_TIMEOUT=%s) passed", timeout)
	default:
		return "the run was stopped (SIGTERM or interrupt)"
	}
}

// exitCode maps the outcome to DESIGN.md's exit codes, in one place.
func (j job) exitCode(res reconcile.Result, interrupted string, errs ...error) int {
	if interrupted != "" {
		return exitIncomplete
	}
	for _, err := range errs {
		if needsFixing(err) {
			return exitUsage
		}
	}
	for _, err := range errs {
		if err != nil {
			return exitIncomplete
		}
	}
	if j.failOn != "" {
		for _, d := range res.Gaps() {
			if d.Settled && d.Severity.AtLeast(j.failOn) {
				return exitGaps
			}
		}
	}
	return exitOK
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

// printSummary writes what a person (text) or a script (json: the report
// itself, plus where it was written) reads on stdout.
func printSummary(w io.Writer, format string, rep report.Report, dir string) error {
	if format == "json" {
		b, err := json.Marshal(struct {
			report.Report
			ReportDir string `json:"report_dir"`
		}{rep, dir})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	fmt.Fprintf(w, "clickrecon: workspace %s, %s..%s (%s): %s\n\n", rep.WorkspaceID, rep.Window.From, rep.Window.To, rep.Window.TZ, rep.Status)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "date\thours\telido\tlocal\tdelta\t status\t severity\t")
	for _, d := range rep.Days {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t %s\t %s\t\n", d.Date, report.Hours(d.Hours), optNum(d.API, false), optNum(d.Local, false), optNum(d.Delta, true), d.Status, report.DaySeverity(d))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	summary := "not read"
	if rep.Totals.APISummary != nil {
		summary = fmt.Sprint(*rep.Totals.APISummary)
	}
	fmt.Fprintf(w, "\ntotals over verified days: elido %d (summary for the window %s), local %d, delta %+d\n",
		rep.Totals.API, summary, rep.Totals.Local, rep.Totals.Delta)
	if len(rep.Links) > 0 {
		fmt.Fprintf(w, "\nlinks that differ (%d; the largest first):\n", len(rep.Links))
		for i, l := range rep.Links {
			if i == maxTextLinks {
				fmt.Fprintf(w, "  and %d more: see report.csv\n", len(rep.Links)-maxTextLinks)
				break
			}
			fmt.Fprintf(w, "  %s  %-24s elido %d, local %d, delta %+d (%s)\n", l.Date, l.LinkID, l.API, l.Local, l.Delta, l.Status)
		}
	}
	if rep.Drilldown.Mode != drillOff && rep.Drilldown.Mode != drillNone {
		fmt.Fprintf(w, "drill-down: %s, %d requests, %d links unchecked\n", rep.Drilldown.Mode, rep.Drilldown.Requests, rep.Drilldown.UncheckedLinks)
	}
	fmt.Fprintln(w)
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "finding (%s): %s\n", f.Kind, f.Message)
	}
	for _, d := range rep.Days {
		if d.Status == string(reconcile.Unverifiable) {
			fmt.Fprintf(w, "%s unverifiable: %s\n", d.Date, d.Reason)
		}
	}
	_, err := fmt.Fprintf(w, "report: %s\n", dir)
	return err
}

// maxTextLinks bounds the link rows printed on stdout.
const maxTextLinks = 10

func optNum(n *int64, signed bool) string {
	switch {
	case n == nil:
		return "-"
	case signed:
		return fmt.Sprintf("%+d", *n)
	}
	return fmt.Sprint(*n)
}
