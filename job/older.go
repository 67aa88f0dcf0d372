package job

import (
	"context"
	"log/slog"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// healLookBack is how many days before its window a run looks for days
// Slack was told are gaps and was never told healed (history.OpenDays):
// those it re-checks, so that a day that heals after it left the nightly
// window is still told healed. An older one is no longer followed.
const healLookBack = 60

// olderRead is what re-checking the open alerted days before the window
// needs: the history, Elido, the store and the run's settings.
type olderRead struct {
	history   *history.History
	elido     *elido.Client
	store     *store.Store
	query     store.Query
	scope     history.Scope
	window    reconcile.Window // the run's
	retention int
	settle    time.Duration
	tolerance reconcile.Tolerance
	now       time.Time
	log       *slog.Logger
}

// recheckOlder returns the days before r.window, within healLookBack,
// that Slack was told are gaps and not yet told healed (or whose heal was
// told once without an answer), as the sources count them now: the gap
// alert stage tells those that match healed (decideGaps), and nothing
// else of them. Their span is read at once: one Elido read and one store
// read, at most healLookBack days. A read that fails is logged and
// re-checks nothing: the next night tries again.
func recheckOlder(ctx context.Context, r olderRead) []report.Day {
	until := r.window.From.AddDays(-1)
	since := r.window.From.AddDays(-healLookBack)
	open, err := r.history.OpenDays(ctx, r.scope, since.String(), until.String())
	if err != nil {
		r.log.Warn("the open alerts before the window were not read: none is re-checked tonight", "err", err)
		return nil
	}
	if len(open) == 0 {
		return nil
	}
	from, err := reconcile.ParseDate(open[0])
	if err != nil {
		r.log.Warn("the open alerts before the window were not read: none is re-checked tonight", "err", err)
		return nil
	}
	w := reconcile.Window{From: from, To: until, Loc: r.window.Loc}
	api, summaries, elidoErr := readElido(ctx, elidoRead{client: r.elido, window: w, retention: r.retention, now: r.now, log: r.log, progress: noProgress{}})
	local, storeErr := readTotals(ctx, storeRead{store: r.store, query: r.query, window: w, log: r.log, progress: noProgress{}})
	if err := firstErr(elidoErr, storeErr); err != nil {
		r.log.Warn("the open alerts before the window were not re-checked: the next night tries again", "err", err)
		return nil
	}
	res := reconcile.Compare(reconcile.Input{Window: w, Now: r.now, Settle: r.settle, Tolerance: r.tolerance,
		API: api, Local: local, Summaries: summaries})
	rep := report.New(res, w, report.Meta{})
	want := map[string]bool{}
	for _, d := range open {
		want[d] = true
	}
	var days []report.Day
	for _, d := range rep.Days {
		if want[d.Date] {
			days = append(days, d)
		}
	}
	r.log.Info("open alerts before the window re-checked", "from", w.From.String(), "to", w.To.String(), "days", len(days))
	return days
}
