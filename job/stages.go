package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/clickrecon/clickrecon/check"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/safehttp"
	"github.com/clickrecon/clickrecon/job/runlock"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// The stages around a run's reading, in the order Run walks them: the
// run lock, the probe of the sources, the monitors' start, the summary
// on stdout with the exit code, and the monitors' finish.

// Exit codes (docs/contract.md): what a run's Outcome, a repair's or a
// merge's comes to.
const (
	ExitOK         = 0 // the run completed
	ExitGaps       = 1 // the run completed and found gaps at or above --fail-on
	ExitUsage      = 2 // usage or configuration error: a retry cannot help
	ExitIncomplete = 3 // the run could not complete: a retry may help
)

// takeLock is the lock stage: it takes the workspace's run lock in the
// database on (runlock.On: a PostgreSQL advisory lock, a MySQL named lock,
// or a lock file beside the SQLite history or store; zero: no lock).
// While another run or repair holds it, this one is refused (exit 3: the
// CronJob retries it later) and does nothing else; stdout says so, when
// format is text, naming what may hold it (who). A lock that cannot be
// taken at all is returned as lockErr, for the caller to decide. lock is
// nil when there is none; the run checks it is still held before it
// posts, records or inserts anything.
func takeLock(ctx context.Context, log *slog.Logger, on dsn.Target, workspaceID, format string, stdout io.Writer, who string) (lock *runlock.Lock, lockErr error, refused bool) {
	if on.IsZero() { // the demo's runs: no database to lock
		return nil, nil, false
	}
	lock, err := runlock.Take(ctx, on, workspaceID)
	switch {
	case errors.Is(err, runlock.ErrLocked):
		log.Error("another clickrecon "+who+" of this workspace holds the lock; this one does nothing and exits 3", "workspace_id", workspaceID)
		if format == "text" && stdout != nil {
			fmt.Fprintf(stdout, "clickrecon: another %s of workspace %s is in progress (it holds the lock); nothing was done\n", who, workspaceID)
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

// probe is the probe stage (Options.Probe): it checks, before the first
// request to Elido, that the store opens and its query fits it
// (check.Store), that the history, if HISTORY_DSN is set, exists (a
// SQLite file), opens and is migrated (check.History), and that the
// report destination takes a write (check.Reports): what clickrecon check
// asks of them too. It returns the mistakes that only the configuration
// can mend (exit 2), each naming what to fix, by the part of a run they
// are a failure of (the store, the history down, the report storage), so
// that the end of the run tells them as a run would. A failure a retry
// may mend (a refused or lost connection, a timeout) is not returned: the
// run goes on, meets it where it reads or writes, and exits 3, as it
// would without the probe.
func probe(ctx context.Context, o Options, dest *storage.Dest) []Failure {
	// The whole probe within RECON_TIMEOUT, as the run is: a shorter
	// deadline than check's own bounds the history and report probes too.
	ctx, cancel := context.WithTimeout(ctx, min(o.Timeout, check.Timeout))
	defer cancel()
	var fs []Failure
	if err := ProbeStore(ctx, o.Timeout, StoreProbe{Store: o.Store, Query: o.Query, QueryFile: o.QueryFile,
		TimestampZone: o.TimestampZone, Window: o.Window}); err != nil {
		fs = append(fs, Failure{Part: PartStore, Err: err})
	}
	switch {
	case o.HistoryMissing != nil:
		// A SQLite history deleted overnight (or never migrated): told as
		// a history that is down, with what to run.
		fs = append(fs, Failure{Part: PartHistoryDown, Err: fmt.Errorf("HISTORY_DSN: %w", o.HistoryMissing)})
	case !o.History.IsZero():
		if err, retry := check.History(ctx, o.History); err != nil && !retry {
			fs = append(fs, Failure{Part: PartHistoryDown, Err: err})
		}
	}
	if err, retry := check.Reports(ctx, dest); err != nil && !retry {
		fs = append(fs, Failure{Part: PartReport, Err: err})
	}
	return fs
}

// StoreProbe is what the store's probe reads: the store, its query (and
// STORE_QUERY_FILE, which its errors name), the zone of its timestamps
// and the window whose first day it counts.
type StoreProbe struct {
	Store         dsn.Target
	Query         store.Query
	QueryFile     string
	TimestampZone *time.Location
	Window        reconcile.Window
}

// ProbeStore is the store's part of the probe, which repair runs too,
// within timeout (RECON_TIMEOUT) and check's own bound: the mistake in
// STORE_DSN or the store query that only the configuration can mend,
// naming what to fix, else nil.
func ProbeStore(ctx context.Context, timeout time.Duration, p StoreProbe) error {
	ctx, cancel := context.WithTimeout(ctx, min(timeout, check.Timeout))
	defer cancel()
	err, retry := check.Store(ctx, check.Spec{Store: p.Store, StoreOptions: store.Options{TimestampZone: p.TimestampZone},
		Query: p.Query, QueryFile: p.QueryFile, Day: p.Window.From, Loc: p.Window.Loc})
	if retry {
		return nil
	}
	return err
}

// failuresErr joins the failures' errors, one a line.
func failuresErr(fs []Failure) error {
	var errs []error
	for _, f := range fs {
		errs = append(errs, f.Err)
	}
	return errors.Join(errs...)
}

// exitCode maps a run's Outcome to the exit codes of docs/contract.md,
// in one place: an interrupted run or a report not stored is incomplete
// (3); a failure a retry cannot mend is a usage error (2), any other
// failure incomplete (3); else gaps at failOn (1), or 0.
func exitCode(out Outcome, failOn reconcile.Severity) int {
	if out.Interrupted != nil {
		return ExitIncomplete
	}
	// Elido redirecting to another origin answers the same way every
	// time: ELIDO_API_BASE names the wrong place.
	if errors.Is(out.Err(PartElido), safehttp.ErrRedirect) {
		return ExitUsage
	}
	if out.Err(PartReport) != nil {
		return ExitIncomplete
	}
	for _, f := range out.Failures {
		if needsFixing(f.Err) {
			return ExitUsage
		}
	}
	if len(out.Failures) > 0 {
		return ExitIncomplete
	}
	if failing(out.Report, failOn) {
		return ExitGaps
	}
	return ExitOK
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
	return elido.NeedsFixing(err) || errors.Is(err, store.ErrBadQuery) || errors.Is(err, store.ErrRefused) ||
		errors.Is(err, history.ErrNotMigrated) || errors.Is(err, alert.ErrMisconfigured)
}

// repairExit maps a repair's outcome to its exit code. 0: every gap found
// was repaired (or printed); 1: some hour was refused, or a day still
// differs; 2: the store could not be opened, or written, as configured
// (STORE_WRITE_DSN names another store, its role lacks a grant) and a
// retry cannot help; 3: a source or a write failed, the run lock was not
// taken, or the repair was interrupted.
func repairExit(out RepairOutcome, err error) int {
	switch {
	case needsFixing(err): // the store refused the DSN, or has not the events schema
		return ExitUsage
	case err != nil:
		return ExitIncomplete
	case needsFixing(out.Err): // a day's write refused by the role's grants
		return ExitUsage
	case out.Err != nil:
		return ExitIncomplete
	case out.Unrepaired:
		return ExitGaps
	}
	return ExitOK
}
