// Package job is one reconciliation run, as stages over values: read
// Elido, read the store, compare, drill into the days that differ,
// explain, write the report, notify Slack and record the run. Run lists
// the stages in order; cmd/clickrecon builds the clients, takes the lock
// and turns the Outcome into an exit code.
package job

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// Options are the validated settings of one run.
type Options struct {
	Window      reconcile.Window
	WorkspaceID string
	RunKey      string // report.RunKey of the workspace, window and store
	// StoreID is report.StoreID of the redacted STORE_DSN and the query,
	// the store id of earlier versions: Run replaces it with the store's
	// identity (storeID) and moves what the history kept under it.
	StoreID  string
	StoreDSN string // STORE_DSN
	Query    store.Query
	// TimestampZone is STORE_TIMESTAMP_TZ: the zone of a ts column of type
	// timestamp (without time zone). nil: UTC.
	TimestampZone *time.Location
	HistoryDSN    string // HISTORY_DSN; "": no history, no alert de-duplication

	Settle    time.Duration       // RECON_SETTLE
	Tolerance reconcile.Tolerance // RECON_TOLERANCE_*, RECON_FAIL_*
	Timeout   time.Duration       // RECON_TIMEOUT, which the run's context already carries
	Drilldown bool                // --drilldown auto
	DrillMax  int                 // RECON_DRILLDOWN_MAX_REQUESTS
	Retention int                 // ELIDO_RETENTION_DAYS; 0: no limit
	ReportDir string              // RECON_REPORT_DIR, opened when Deps.Reports is nil
	ReportURL string              // RECON_REPORT_URL; "": the report is not linked
	KeepDays  int                 // RECON_REPORT_KEEP_DAYS; 0 keeps every local report

	// DryRun posts nothing and records nothing; the report is still
	// written.
	DryRun bool
	// Unlocked says the run lock could not be taken: the run reports what
	// it can but posts nothing and records nothing, which is what the lock
	// protects.
	Unlocked bool
	// Secrets are the run's secrets (the API key, the DSNs and their
	// passwords, the Slack webhook or token): a Slack notice quotes
	// errors, and never these.
	Secrets []string

	// Repair is --repair: RepairOff, RepairPrint or RepairApply (see
	// repairMissing), with the writable role and custom insert it uses.
	Repair        string
	StoreWriteDSN string // STORE_WRITE_DSN
	RepairInsert  string // the text of REPAIR_INSERT_FILE; "": the events schema's
}

// Deps are the clients a run talks to, its clock and where it reports its
// progress. The store and the history are opened by Run, from their DSNs:
// one that cannot be opened is a source whose days are unverifiable, not
// a reason to stop.
type Deps struct {
	Elido    *elido.Client
	Notifier *alert.Notifier // nil: no Slack
	Reports  *report.Dest    // where reports go; nil: Options.ReportDir, opened by Run
	Log      *slog.Logger    // carries the run key
	Now      func() time.Time
	Progress Progress
	// Held checks that the run lock is still this run's, immediately
	// before anything is posted or recorded; nil: no lock to check.
	Held func(ctx context.Context) error
	// DrillLimit returns the context the drill-down runs in, which ends
	// when the drill-down must stop. nil: at the run's deadline less a
	// fifth of RECON_TIMEOUT (at most 5 minutes), kept for what follows.
	DrillLimit func(ctx context.Context) (context.Context, context.CancelFunc)
}

// withDefaults fills in what a caller may leave out: the wall clock, a
// logger that drops its lines and no progress display.
func (d Deps) withDefaults() Deps {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Progress == nil {
		d.Progress = noProgress{}
	}
	return d
}

type noProgress struct{}

func (noProgress) Step(string, int, int) {}
func (noProgress) Done()                 {}

// Progress is where a run shows how far each stage got (a terminal's
// progress bar).
type Progress interface {
	Step(stage string, done, total int)
	Done()
}

// Outcome is what a run did: the report and where it went, the comparison
// it came from, and what went wrong with each source. cmd/clickrecon maps
// it to an exit code.
type Outcome struct {
	Report      report.Report
	Dir         string // where the report was written; "" if it was not
	Result      reconcile.Result
	Interrupted string // why the run stopped early; "" if it did not

	ElidoErr   error // the first Elido read that failed
	StoreErr   error // the store could not be opened, or a day not counted
	HistoryErr error // the history could not be opened, read or written
	SlackErr   error // the alert could not be sent
}

// Run reconciles o.Window: every stage runs in order, each taking the
// values the ones before it returned. Sources that fail leave their days
// unverifiable rather than stopping the run. The error is set only when
// the report could not be written; the Outcome is filled as far as the
// run got.
func Run(ctx context.Context, o Options, d Deps) (Outcome, error) {
	d = d.withDefaults()
	var err error
	st, storeErr := store.OpenWith(ctx, o.StoreDSN, store.Options{TimestampZone: o.TimestampZone})
	if st != nil {
		defer st.Close()
	}
	h, historyErr := openHistory(ctx, o.HistoryDSN)
	if h != nil {
		defer h.Close()
	}
	w := o.Window
	log := d.Log
	log.Info("run started", "workspace_id", o.WorkspaceID, "from", w.From.String(), "to", w.To.String(),
		"tz", w.Loc.String(), "days", w.Len())

	api, summaries, elidoErr, local, storeErr := readBoth(ctx, d, o, st, storeErr)
	res := reconcile.Compare(reconcile.Input{
		Window:    w,
		Now:       d.Now(),
		Settle:    o.Settle,
		Tolerance: o.Tolerance,
		API:       api,
		Local:     local,
		Summaries: summaries,
	})
	res, drill, drillErr := drillDown(ctx, d, o, st, res)
	elidoErr = firstErr(elidoErr, drillErr)
	interrupted := interruption(ctx, o.Timeout)
	res, historyErr = revise(ctx, d, o, h, historyErr, res, interrupted)
	sid, identityErr := storeID(ctx, d, o, st)
	rep := report.New(res, w, report.Meta{
		RunKey:      o.RunKey,
		WorkspaceID: o.WorkspaceID,
		StoreID:     sid,
		GeneratedAt: d.Now(),
		Interrupted: interrupted,
		Requests:    d.Elido.Requests(),
		Drilldown:   drill,
	})
	if o.ReportURL != "" {
		// cmd checked the base URL; a run key is always one path segment.
		if rep.Link, err = report.HTMLURL(o.ReportURL, rep.RunKey); err != nil {
			log.Warn("the report will not be linked", "err", err)
		}
	}
	rep.Findings = append(rep.Findings, repairMissing(ctx, d, o, st, res, interrupted)...)
	d.Progress.Done()
	out := Outcome{Report: rep, Result: res, Interrupted: interrupted, ElidoErr: elidoErr, StoreErr: storeErr, HistoryErr: historyErr}
	dir, err := writeReport(ctx, d, o, rep)
	if err != nil {
		log.Error("report not written", "err", err)
		return out, err
	}
	out.Dir = dir
	out.StoreErr = firstErr(out.StoreErr, identityErr)
	if out.HistoryErr == nil && identityErr == nil && interrupted == "" {
		out.HistoryErr = adoptStoreID(ctx, d, o, h, sid)
	}
	blocked := firstErr(out.HistoryErr, identityErr)
	if o.Unlocked && blocked == nil {
		blocked = errUnlocked
	}
	// A history that could not be opened cannot remember a notice.
	historyDown := o.HistoryDSN != "" && h == nil
	// Under SLACK_NOTIFY=always a run that could not check, with no gap
	// to show, posts its notice as its message: an alert of zeros would
	// hide the reason.
	noticeInstead := d.Notifier.Always() && !alert.Alertable(rep) && len(failures(o, out, historyDown)) > 0
	if !noticeInstead {
		out.SlackErr = notify(ctx, d, o, h, rep, interrupted, blocked)
	}
	var nh noticeHistory
	if h != nil {
		nh = h
	}
	postErr, recordErr := notice(ctx, d, o, nh, out, historyDown, noticeInstead)
	out.SlackErr = firstErr(out.SlackErr, postErr)
	out.HistoryErr = firstErr(out.HistoryErr, recordErr)
	out.HistoryErr = firstErr(out.HistoryErr, record(ctx, d, o, h, rep, interrupted))
	return out, nil
}

// readBoth reads Elido and the store's totals at the same time, so a run
// takes about as long as the slower of the two. Each side keeps its own
// limits: Elido's requests still go through the client's rate limiter, and
// both end at the run's deadline. Their progress shows as one stage.
func readBoth(ctx context.Context, d Deps, o Options, st *store.Store, openErr error) (
	api map[reconcile.Date]reconcile.Reading, summaries []reconcile.SummaryCheck, elidoErr error,
	local map[reconcile.Date]reconcile.Reading, storeErr error) {
	p := &readProgress{p: d.Progress}
	de, ds := d, d
	de.Progress, ds.Progress = p.side(0), p.side(1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		local, storeErr = readTotals(ctx, ds, o, st, openErr)
	}()
	api, summaries, elidoErr = readElido(ctx, de, o)
	wg.Wait()
	return api, summaries, elidoErr, local, storeErr
}

// readProgress adds up the steps of the two sources read at once into one
// stage, so the bar does not flip between them.
type readProgress struct {
	p           Progress
	mu          sync.Mutex
	done, total [2]int
}

func (r *readProgress) side(i int) Progress { return readSide{r, i} }

type readSide struct {
	r *readProgress
	i int
}

func (s readSide) Step(_ string, done, total int) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done[s.i], r.total[s.i] = done, total
	r.p.Step("elido+store", r.done[0]+r.done[1], r.total[0]+r.total[1])
}

func (readSide) Done() {}

// reportGrace bounds the report's write after the run was stopped: the
// report of an interrupted run is still written, within this.
const reportGrace = 20 * time.Second

// writeReport writes rep to d.Reports (or o.ReportDir), under the run's
// deadline, or within reportGrace when the run was stopped, then removes
// local reports older than RECON_REPORT_KEEP_DAYS. A prune that fails is
// a warning: this run's report is written.
func writeReport(ctx context.Context, d Deps, o Options, rep report.Report) (string, error) {
	dest := d.Reports
	if dest == nil {
		var err error
		if dest, err = report.Open(ctx, o.ReportDir); err != nil {
			return "", err
		}
		defer dest.Close()
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), reportGrace)
		defer cancel()
	}
	dir, err := dest.WriteReport(ctx, rep)
	if err != nil {
		return "", err
	}
	d.Log.Info("report written", "report", dir, "link", rep.Link)
	if o.KeepDays > 0 {
		removed, err := dest.Prune(d.Now(), time.Duration(o.KeepDays)*24*time.Hour, rep.RunKey)
		if err != nil {
			d.Log.Warn("old reports not all removed", "keep_days", o.KeepDays, "removed", len(removed), "err", err)
		} else if len(removed) > 0 {
			d.Log.Info("old reports removed", "keep_days", o.KeepDays, "removed", len(removed))
		}
	}
	return dir, nil
}

// openHistory opens the run history, if there is one.
func openHistory(ctx context.Context, dsn string) (*history.History, error) {
	if dsn == "" {
		return nil, nil
	}
	return history.Open(ctx, dsn)
}

// errUnlocked stands for a lock that could not be taken, which cmd
// reports itself: it only stops the post.
var errUnlocked = errors.New("the run lock was not taken")

// Finished logs the run's summary line with the exit code cmd chose.
func (out Outcome) Finished(log *slog.Logger, code int, took time.Duration) {
	rep := out.Report
	log.Info("run finished", "status", rep.Status, "exit_code", code, "report", out.Dir,
		"days", rep.Coverage.Days, "missing", rep.Coverage.Missing, "surplus", rep.Coverage.Surplus,
		"provisional", rep.Coverage.Provisional, "unverifiable", rep.Coverage.Unverifiable,
		"api", rep.Totals.API, "local", rep.Totals.Local, "delta", rep.Totals.Delta,
		"requests", rep.Requests, "duration_ms", took.Milliseconds())
}

// Errs are the sources' errors, in the order the exit code weighs them:
// Elido, the store, the history, Slack.
func (out Outcome) Errs() []error {
	return []error{out.ElidoErr, out.StoreErr, out.HistoryErr, out.SlackErr}
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

func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
