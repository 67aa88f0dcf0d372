package job

import (
	"context"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
)

// revise adds to the result the days whose Elido count changed since an
// earlier run recorded them (the provider revised it), so the report is
// built once, complete. It returns the history's error, if any (openErr:
// it could not be opened): without a readable history the run posts
// nothing, so that it cannot repeat an alert.
func revise(ctx context.Context, d Deps, o Options, h *history.History, openErr error, res reconcile.Result, interrupted string) (reconcile.Result, error) {
	if openErr != nil {
		d.Log.Error("history not opened: nothing will be posted to Slack", "err", openErr)
		return res, openErr
	}
	if h == nil || interrupted != "" {
		return res, nil
	}
	w := o.Window
	earlier, err := h.LastCounts(ctx, o.WorkspaceID, w.Loc.String(), w.From, w.To)
	if err != nil {
		d.Log.Error("history not read: nothing will be posted to Slack", "err", err)
		return res, err
	}
	return reconcile.Revise(res, earlier), nil
}

// notify posts what Slack should hear of the report, once. It posts
// nothing on a dry run, after an interruption (no half-finished post), or
// when the history that de-duplicates alerts could not be read or the run
// lock not taken (blocked).
func notify(ctx context.Context, d Deps, o Options, h *history.History, rep report.Report, interrupted string, blocked error) error {
	switch {
	case d.Notifier == nil:
		return nil
	case o.DryRun:
		d.Log.Info("slack skipped: --dry-run")
		return nil
	case interrupted != "":
		d.Log.Warn("slack skipped: the run was stopped")
		return nil
	case blocked != nil:
		return nil
	}
	_, csv, err := report.SlackCSV(rep)
	if err != nil {
		return err
	}
	out, err := d.Notifier.Send(ctx, rep, csv, h, lockGuard(d))
	if err != nil {
		d.Log.Error("slack failed; the report is on disk", "err", err)
		return err
	}
	d.Log.Info("slack", "outcome", out)
	return nil
}

// record writes the run to the history, all or nothing; never on a dry
// run, after an interruption, or without the run lock.
func record(ctx context.Context, d Deps, o Options, h *history.History, rep report.Report, interrupted string) error {
	if h == nil || o.DryRun || interrupted != "" || o.Unlocked {
		return nil
	}
	if err := lockGuard(d)(ctx); err != nil {
		d.Log.Error("run lock lost: the run is not recorded in the history", "err", err)
		return err
	}
	if err := h.RecordRun(ctx, rep); err != nil {
		d.Log.Error("run not recorded in the history", "err", err)
		return err
	}
	return nil
}

// lockGuard checks, immediately before a post or a record, that the run
// lock is still this run's: once it is lost another run may hold it, and
// both would post.
func lockGuard(d Deps) alert.Guard {
	return func(ctx context.Context) error {
		if d.Held == nil {
			return nil
		}
		return d.Held(ctx)
	}
}
