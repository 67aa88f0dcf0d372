// Package job is one reconciliation run, as stages over values: take the
// run lock, probe the sources, read Elido, read the store, compare, drill
// into the days that differ, explain, write the report, notify Slack,
// record the run, print its summary and tell monitoring how it ended with
// its exit code. Run lists the stages in order; cmd/clickrecon reads the
// configuration and builds the clients.
package job

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// Options are the validated settings of one run.
type Options struct {
	Window      reconcile.Window
	WorkspaceID string
	RunKey      string // report.RunKey of the workspace, window and store
	// LegacyStoreID is report.StoreID of the redacted STORE_DSN and the
	// query: the store id of earlier versions, and the run's when the
	// store cannot say what it is. Run goes by the id of the store's
	// identity when it can read it (identify), and moves what the history
	// kept under the legacy id to it.
	LegacyStoreID string
	Store         dsn.Target // STORE_DSN, read by store.ParseDSN
	Query         store.Query
	// TimestampZone is STORE_TIMESTAMP_TZ: the zone of a ts column of type
	// timestamp (without time zone). nil: UTC.
	TimestampZone *time.Location
	// History is HISTORY_DSN, read by history.ParseDSN; zero: no history,
	// no alert de-duplication.
	History dsn.Target

	Settle    time.Duration       // RECON_SETTLE
	Tolerance reconcile.Tolerance // RECON_TOLERANCE_*, RECON_FAIL_*
	Timeout   time.Duration       // RECON_TIMEOUT, which the run's context already carries
	Drilldown bool                // --drilldown auto
	DrillMax  int                 // RECON_DRILLDOWN_MAX_REQUESTS
	Diagnose  DiagnoseMode        // RECON_DIAGNOSE; "": off
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
	// Lock is the database the run lock is taken on (runlock.On); zero:
	// no lock. A run that cannot take it goes on Unlocked.
	Lock dsn.Target
	// Probe asks for the probe of the store, the history and the report
	// storage before Elido is asked anything (probe): a failure there
	// only the configuration can mend makes the run read nothing and
	// only end (see unread), with exit 2. QueryFile is STORE_QUERY_FILE,
	// which the store's errors name; HistoryMissing says HISTORY_DSN
	// names a SQLite file that does not exist (History is then zero).
	Probe          bool
	QueryFile      string
	HistoryMissing error

	// Format is what stdout shows at the end (printSummary): text or
	// json. FailOn is --fail-on, the severity of a gap that exits 1 ("":
	// none).
	Format string
	FailOn reconcile.Severity

	// Repair is --repair: RepairOff, RepairPrint or RepairApply (see
	// repairMissing), with the writable role and custom insert it uses.
	Repair       RepairMode
	StoreWrite   dsn.Target // STORE_WRITE_DSN, read by store.ParseWriteDSN
	RepairInsert string     // the text of REPAIR_INSERT_FILE; "": the events schema's
}

// Deps are the clients a run talks to, its clock and where it reports its
// progress. The store and the history are opened by Run, from their DSNs:
// one that cannot be opened is a source whose days are unverifiable, not
// a reason to stop.
type Deps struct {
	Elido    *elido.Client
	Notifier *alert.Notifier // nil: no Slack
	Reports  *storage.Dest   // where reports go; nil: Options.ReportDir, opened by Run
	Log      *slog.Logger    // carries the run key
	Now      func() time.Time
	Progress Progress
	// Held checks that the run lock is still this run's, immediately
	// before anything is posted or recorded; nil: no lock to check. Run
	// sets it when it takes the lock of Options.Lock.
	Held func(ctx context.Context) error
	// Monitors are told that the run started, just before Elido is read,
	// and how it finished, with its exit code; zero: none.
	Monitors Monitors
	// Stdout is where the run's summary goes, and the words of a run the
	// lock refused; nil: nowhere.
	Stdout io.Writer
	// ProbeFailed, when set, is given the probe's mistakes, joined, as
	// soon as they are found, before the run ends (cmd prints them).
	ProbeFailed func(error)
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

// Run reconciles o.Window: every stage runs in order, each taking the
// values the ones before it returned. The lock comes first (takeLock),
// so that two runs that meet the same broken store tell it once, under
// the lock, as they tell anything else; a run the lock refuses does
// nothing else, pings no monitor (the run that holds the lock does, and
// a ping of ours would say it failed) and exits 3. A lock that cannot be
// taken is logged and the run goes on unlocked: it posts and records
// nothing. The store and the history are then probed (probe) before
// Elido is asked anything: a mistake only the configuration can mend
// exits 2 at once, and Slack and monitoring hear of it as of any failure
// a run meets (a night that broke must not be a silent one); when the
// lock lives in the database the probe refused, it could not be taken,
// and the notice goes out without it. Then the monitors hear the run
// start, the sources are read (reconcileWindow), the summary is printed
// and the monitors hear how it finished, with the exit code.
//
// The Outcome says what failed and carries the exit code; the error is
// the report's, when it could not be stored (also among the Outcome's
// failures).
func Run(ctx context.Context, o Options, d Deps) (Outcome, error) {
	d = d.withDefaults()
	lock, lockErr, refused := takeLock(ctx, d.Log, o.Lock, o.WorkspaceID, o.Format, d.Stdout, "run")
	if refused {
		return Outcome{Code: ExitIncomplete}, nil
	}
	defer releaseLock(d.Log, lock)
	if lock != nil {
		d.Held = lock.Held
	}
	o.Unlocked = o.Unlocked || lockErr != nil
	if o.Probe {
		if fs := probe(ctx, o, d.Reports); len(fs) > 0 {
			if d.ProbeFailed != nil {
				d.ProbeFailed(failuresErr(fs))
			}
			out := unread(ctx, o.ending(d), o.History, fs) // it only ends: what failed is fs
			out.Code = ExitUsage
			d.Monitors.finish(ctx, d.Log, o.WorkspaceID, out.Code, report.Report{}, time.Now(), 0)
			return out, nil
		}
	}
	if lockErr != nil {
		d.Log.Error("the run lock could not be taken: nothing will be posted or recorded", "err", lockErr)
	}
	started := time.Now()
	d.Monitors.start(ctx, d.Log)
	runStarted := d.Now()
	out, err := reconcileWindow(ctx, o, d)
	out = out.Failed(PartLock, lockErr)
	out.Code = exitCode(out, o.FailOn)
	out.Finished(d.Log, out.Code, d.Now().Sub(runStarted))
	if err == nil && d.Stdout != nil { // without a report, the summary would name one that is not there
		if err := printSummary(d.Stdout, o.Format, out.Report, out.Dir); err != nil {
			d.Log.Error("summary not printed", "err", err)
			out.Code = ExitIncomplete
		}
	}
	d.Monitors.finish(ctx, d.Log, o.WorkspaceID, out.Code, out.Report, time.Now(), time.Since(started))
	return out, err
}

// ending is what the end of the run o reads, before the store and the
// history are opened.
func (o Options) ending(d Deps) ending {
	return ending{slack: d.Notifier, held: d.Held, log: d.Log, now: d.Now, window: o.Window, runKey: o.RunKey,
		workspaceID: o.WorkspaceID, query: o.Query.Name(), legacyStoreID: o.LegacyStoreID,
		dryRun: o.DryRun, unlocked: o.Unlocked, secrets: o.Secrets}
}

// reconcileWindow is the reading of a run, from opening its sources to
// its end. Sources that fail leave their days unverifiable rather than
// stopping the run, and a report that cannot be stored does not stop it
// either: every run ends with one decision of what Slack hears (decide),
// carried out by one stage (tell): ending.end.
func reconcileWindow(ctx context.Context, o Options, d Deps) (Outcome, error) {
	e := o.ending(d)
	st, storeErr := store.Open(ctx, o.Store, store.Options{TimestampZone: o.TimestampZone})
	if st != nil {
		defer st.Close()
	}
	h, historyErr := openHistory(ctx, o.History, d.Now)
	if h != nil {
		defer h.Close()
	}
	w := o.Window
	log := d.Log
	log.Info("run started", "workspace_id", o.WorkspaceID, "from", w.From.String(), "to", w.To.String(),
		"tz", w.Loc.String(), "days", w.Len())
	if historyErr != nil {
		log.Error("history not opened: nothing will be posted to Slack", "err", historyErr)
	}
	res, elidoErr, storeErr := readSources(ctx, o, d, st, storeErr)
	naive, said, naiveErr := storeTimes(ctx, log, st, o.Query, w)
	res, drill, drillErr := drillDown(ctx, drillStage{on: o.Drilldown, limit: d.DrillLimit, timeout: o.Timeout,
		driller: driller{client: d.Elido, store: st, query: o.Query, window: w, now: d.Now(),
			retention: o.Retention, max: o.DrillMax, log: log, progress: d.Progress, wall: naive.WallZone()}}, res)
	diag := diagnoseRun(ctx, o, d, st, res, drill.Requests)
	// identityID is the store id of what the store is (identify), "" when
	// it cannot say; storeID is the one the run goes by: identityID, else
	// the legacy id of how STORE_DSN spells it.
	identityID, identityErr := identify(ctx, log, st, o.Query)
	storeID := identityID
	if storeID == "" {
		storeID = o.LegacyStoreID
	}
	older := recheck(ctx, o, d, h, st, storeID, elidoErr == nil && storeErr == nil && identityErr == nil)
	interrupted := interruption(ctx, o.Timeout)
	var reviseErr error
	if interrupted == nil {
		res, reviseErr = revise(ctx, log, h, o.WorkspaceID, w, res)
	}
	knownID := knownStoreID(ctx, log, h, o.WorkspaceID, o.LegacyStoreID, identityID)
	rep := runReport(o, d, res, knownID, interrupted, drill, diag)
	if st != nil && interrupted == nil {
		rr := o.repairRun()
		rr.Reads = diag.Reads
		found, kept := repairMissing(ctx, d, rr, st, naive, naiveErr, res)
		rep.Findings = append(rep.Findings, found...)
		setRepaired(rep.Days, kept)
	}
	rep.Findings = append(rep.Findings, said...)
	d.Progress.Done()
	out := Outcome{Report: rep, Result: res, Interrupted: interrupted}.
		Failed(PartElido, firstErr(elidoErr, drillErr)).
		Failed(PartStore, storeErr).
		Failed(PartIdentity, identityErr).
		Failed(PartHistoryDown, historyErr).
		Failed(PartHistory, reviseErr)
	out, reportErr := storeReport(ctx, o, d, out)
	if h != nil && reviseErr == nil && identityID != "" && identityID != o.LegacyStoreID && interrupted == nil && !o.DryRun && !o.Unlocked {
		lockErr, err := adoptStoreID(ctx, log, h, d.Held, o.WorkspaceID, o.LegacyStoreID, identityID)
		out = out.Failed(PartLock, lockErr).Failed(PartHistory, err)
	}
	e.history, e.identityID, e.knownID = h, identityID, knownID
	if interrupted == nil {
		e.older = older
	}
	return endRun(ctx, e, out), reportErr
}

// knownStoreID is the store id the run's report and recorded run go by:
// the store's identity (identityID); when the store could not say what it
// is, the identity the same STORE_DSN last had, as the history remembers
// it (history.KnownStoreID); else "", a store not identified, which the
// trend counts as the one store its workspace reads in the zone, if it
// reads one. So a night whose store was down stays in the store's trend.
// Such a night compared no day (the store not opened), or posts nothing
// (the store did not say what it is), so its alerts are not at stake; its
// notice goes by what it knows itself (noticeScopes).
func knownStoreID(ctx context.Context, log *slog.Logger, h *history.History, workspaceID, legacyStoreID, identityID string) string {
	if identityID != "" || h == nil || legacyStoreID == "" {
		return identityID
	}
	id, _, err := h.KnownStoreID(ctx, workspaceID, legacyStoreID)
	if err != nil {
		log.Warn("the store's last identity not read: the report names no store", "err", err)
	}
	return id
}

// storeTimes is what a run says of the store's times without an offset,
// whatever the drill-down: how the store holds them (naive; naiveErr when
// that could not be read), by which a wall-clock column's hours are
// compared, and the findings the report says of them. A store that was not
// opened says nothing.
func storeTimes(ctx context.Context, log *slog.Logger, st *store.Store, q store.Query, w reconcile.Window) (
	naive store.Naive, said []report.Finding, naiveErr error) {
	if st == nil {
		return naive, nil, nil
	}
	naive, said, naiveErr = assumedZone(ctx, log, st, q, w)
	said = append(said, assumed(ctx, log, st, q, w.Loc)...)
	return naive, said, naiveErr
}

// recheck returns the open alerted days before the window, as the sources
// count them now (recheckOlder), for a run that read both sources (read)
// and may run the gap alert stage; nil for any other run. It runs before
// the run asks whether it was stopped: a signal during the re-check stops
// the run as one during any read does.
func recheck(ctx context.Context, o Options, d Deps, h *history.History, st *store.Store, storeID string, read bool) []report.Day {
	if h == nil || st == nil || d.Notifier == nil || o.DryRun || o.Unlocked || ctx.Err() != nil || !read {
		return nil
	}
	w := o.Window
	return recheckOlder(ctx, olderRead{history: h, elido: d.Elido, store: st, query: o.Query,
		scope: history.Scope{WorkspaceID: o.WorkspaceID, StoreID: storeID, TZ: w.Loc.String()}, window: w,
		retention: o.Retention, settle: o.Settle, tolerance: o.Tolerance, now: d.Now(), log: d.Log})
}

// runReport is the report of the comparison res, with the run's metadata
// (the report's words for an interruption among them) and the diagnoses
// of its days.
func runReport(o Options, d Deps, res reconcile.Result, storeID string, interrupted error,
	drill report.Drilldown, diag diagnoses) report.Report {
	var why string
	if interrupted != nil {
		why = interrupted.Error()
	}
	rep := newReport(d.Log, res, o.Window, report.Meta{
		RunKey:      o.RunKey,
		WorkspaceID: o.WorkspaceID,
		StoreID:     storeID,
		GeneratedAt: d.Now(),
		Interrupted: why,
		Requests:    d.Elido.Requests(),
		Drilldown:   drill,
	}, o.ReportURL)
	report.AddDiagnoses(&rep, diag.Days, o.Window.Loc)
	return rep
}

// setRepaired sets on each of days the clicks the store kept of those the
// repair stage inserted on it (kept, by date).
func setRepaired(days []report.Day, kept map[reconcile.Date]int64) {
	for i := range days {
		if date, err := reconcile.ParseDate(days[i].Date); err == nil {
			days[i].Repaired = kept[date]
		}
	}
}

// storeReport writes out's report (writeReport) and returns out with the
// report's folder, or the failure to write it. Nothing the run tells
// (Slack, the healthcheck, the summary) links a report that is not whole
// in its place.
func storeReport(ctx context.Context, o Options, d Deps, out Outcome) (Outcome, error) {
	keep := time.Duration(o.KeepDays) * 24 * time.Hour
	dir, err := writeReport(ctx, d.Log, d.Reports, o.ReportDir, keep, d.Now(), out.Report)
	out.Dir = dir
	out = out.Failed(PartReport, err)
	if err != nil {
		out.Report.Link = ""
	}
	return out, err
}

// endRun ends the run with e.end. A run stopped by its deadline still
// tells Slack so, within noticeTimeout; one stopped by a signal posts
// nothing, and reads nothing for it.
func endRun(ctx context.Context, e ending, out Outcome) Outcome {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), noticeTimeout)
		defer cancel()
	}
	return e.end(ctx, out)
}

// unread ends a run that the probe of its store or history stopped
// before it read anything (Options.Probe): only the end of a run, over
// an Outcome whose failures are the probe's, so that a store that broke
// overnight is heard in Slack as any failure a run meets, under the same
// notice keys: told once, and "checking again" once a run reads it. A
// history the probe found down is not opened again: the decision treats
// it as down. No gap alert runs, nothing is recorded and no report is
// written.
func unread(ctx context.Context, e ending, historyAt dsn.Target, probe []Failure) Outcome {
	rep := report.New(reconcile.Result{}, e.window, report.Meta{RunKey: e.runKey, WorkspaceID: e.workspaceID,
		StoreID: e.legacyStoreID, GeneratedAt: e.now()})
	rep.Status = report.StatusIncomplete
	out := Outcome{Report: rep, Unread: true, Failures: probe}
	if out.Err(PartHistoryDown) == nil {
		h, err := openHistory(ctx, historyAt, e.now)
		if h != nil {
			defer h.Close()
		}
		e.history = h
		out = out.Failed(PartHistoryDown, err)
		// Its notice follows the store's identity as the history
		// remembers it, as a night whose store is down does: a recovery
		// of an earlier night, pending under it, is settled first.
		e.knownID = knownStoreID(ctx, e.log, h, e.workspaceID, e.legacyStoreID, "")
	}
	return e.end(ctx, out)
}

// ending is what the end of a run reads: Slack, the history (nil without
// one, or when it is down), the run lock, and what names the run and its
// notices.
type ending struct {
	slack       *alert.Notifier // nil: no Slack
	history     *history.History
	held        func(ctx context.Context) error
	log         *slog.Logger
	now         func() time.Time
	window      reconcile.Window
	runKey      string
	workspaceID string
	query       string // the store query's name
	// identityID is the store's identity (identify), "" when it is not
	// known; legacyStoreID the id of how STORE_DSN spells it, which the
	// history of earlier versions is kept under.
	identityID, legacyStoreID string
	// knownID is the identity the history remembers for the store when
	// identityID is "" (knownStoreID): the scope of the notices and
	// recoveries of the nights the store was identified.
	knownID          string
	dryRun, unlocked bool
	secrets          []string
	// older are the days before the window Slack was told are gaps and
	// not yet told healed, as the sources count them now (recheckOlder).
	older []report.Day
}

// end is how every run ends, in three steps. Read: what the history
// remembers (remember: the open notices, the zone the days were alerted
// in) and, when the gap alert stage runs, what Slack was told of the
// window (recallAlerts: earlier posts settled, the alerts, the messages
// an update edits). Decide: one pure decision of everything Slack hears
// and the history keeps (decide, planGaps). Carry out: one stage (tell)
// posts, edits, attaches and records it, through the outbox. No history
// read happens after the decision. It returns out with the decision and
// what failed while telling it.
func (e ending) end(ctx context.Context, out Outcome) Outcome {
	storeID := e.identityID
	if storeID == "" {
		storeID = e.legacyStoreID
	}
	scope, chain := noticeScopes(e.identityID, e.query, e.legacyStoreID)
	if e.identityID == "" && e.knownID != "" {
		// A night that cannot ask its store settles, and follows, the
		// posts of the nights that could: a recovery whose answer was
		// lost there resolves this scope's notice.
		chain = append([]string{chain[0], e.knownID}, chain[1:]...)
	}
	p := policy{Slack: e.slack != nil, Always: e.slack.Always(), DryRun: e.dryRun,
		Unlocked: e.unlocked, History: e.history != nil, Secrets: e.secrets, Now: e.now(), Scope: scope}
	if e.slack != nil {
		p.Transport = e.slack.Transport()
	}
	guard := lockGuard(e.held)

	var mem memory
	if e.slack != nil && !e.dryRun && (out.Interrupted == nil || errors.Is(out.Interrupted, context.DeadlineExceeded)) {
		mem = remember(ctx, e.log, e.history, recall{WorkspaceID: e.workspaceID, StoreID: storeID, Chain: chain, Window: e.window,
			Slack: e.slack, Now: e.now()})
	}
	if run, _ := gapsRun(out, p); run && e.history != nil {
		mem.Alerted = recallAlerts(ctx, e.history, e.slack, guard, out.Report, e.older, e.now())
	}

	out.Told = decide(out, mem, p)
	out = out.Failed(PartHistory, mem.ReadErr)

	t := teller{slack: e.slack, history: e.history, guard: guard, log: e.log, now: e.now, scope: scope}
	out.Failures = append(out.Failures, t.tell(ctx, out.Told, out.Report)...)
	return out
}

// newReport builds the run's report from the comparison, with its
// metadata and, when RECON_REPORT_URL (baseURL) serves reports, its link.
func newReport(log *slog.Logger, res reconcile.Result, w reconcile.Window, meta report.Meta, baseURL string) report.Report {
	rep := report.New(res, w, meta)
	if baseURL != "" {
		// cmd checked the base URL; a run key is always one path segment.
		var err error
		if rep.Link, err = storage.HTMLURL(baseURL, rep.RunKey); err != nil {
			log.Warn("the report will not be linked", "err", err)
		}
	}
	return rep
}

// reportGrace bounds the report's write after the run was stopped: the
// report of an interrupted run is still written, within this.
const reportGrace = 20 * time.Second

// writeReport writes rep to dest (or, when dest is nil, to dirOrURL,
// RECON_REPORT_DIR), under the run's deadline, or within reportGrace when
// the run was stopped, then removes local reports older than keep (0:
// none). A prune that fails is a warning: this run's report is written.
func writeReport(ctx context.Context, log *slog.Logger, dest *storage.Dest, dirOrURL string, keep time.Duration, now time.Time, rep report.Report) (string, error) {
	if dest == nil {
		var err error
		if dest, err = storage.Open(ctx, dirOrURL); err != nil {
			log.Error("report not stored", "err", err)
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
		log.Error("report not stored", "err", err)
		return "", err
	}
	if rep.Link != "" {
		log.Info("report written", "report", dir, "link", rep.Link)
	} else {
		log.Info("report written", "report", dir)
	}
	if keep > 0 {
		removed, err := dest.Prune(now, keep, rep.RunKey)
		if err != nil {
			log.Warn("old reports not all removed", "keep_days", int(keep.Hours()/24), "removed", len(removed), "err", err)
		} else if len(removed) > 0 {
			log.Info("old reports removed", "keep_days", int(keep.Hours()/24), "removed", len(removed))
		}
	}
	return dir, nil
}

// openHistory opens the run history, if there is one, recording its
// times by the run's clock.
func openHistory(ctx context.Context, t dsn.Target, now func() time.Time) (*history.History, error) {
	if t.IsZero() {
		return nil, nil
	}
	return history.Open(ctx, t, history.WithClock(now))
}

func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
