package job

import (
	"context"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
)

// revisions adds to the report the days whose Elido count changed since an
// earlier run (the provider revised it), before the report is written. It
// returns the history's error, if any (openErr: it could not be opened):
// without a readable history the run posts nothing, so that it cannot
// repeat an alert.
func revisions(ctx context.Context, d Deps, h *history.History, openErr error, rep report.Report, interrupted string) (report.Report, error) {
	if openErr != nil {
		d.Log.Error("history not opened: nothing will be posted to Slack", "err", openErr)
		return rep, openErr
	}
	if h == nil || interrupted != "" {
		return rep, nil
	}
	found, err := h.Revisions(ctx, rep)
	if err != nil {
		d.Log.Error("history not read: nothing will be posted to Slack", "err", err)
		return rep, err
	}
	rep.Findings = append(rep.Findings, found...)
	return rep, nil
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
	csv, err := report.CSV(rep)
	if err != nil {
		return err
	}
	out, err := d.Notifier.Send(ctx, rep, csv, h)
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
	if err := h.RecordRun(ctx, rep); err != nil {
		d.Log.Error("run not recorded in the history", "err", err)
		return err
	}
	return nil
}
