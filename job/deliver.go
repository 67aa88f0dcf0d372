package job

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
)

// revise adds to the result the days whose Elido count changed since an
// earlier run recorded them (the provider revised it), so the report is
// built once, complete. A history that cannot be read returns its error:
// the run then posts no gap alert, so that it cannot repeat one.
func revise(ctx context.Context, log *slog.Logger, h *history.History, workspaceID string, w reconcile.Window, res reconcile.Result) (reconcile.Result, error) {
	if h == nil {
		return res, nil
	}
	earlier, err := h.LastCounts(ctx, workspaceID, w.Loc.String(), w.From, w.To)
	if err != nil {
		log.Error("history not read: nothing will be posted to Slack", "err", err)
		return res, err
	}
	return reconcile.Revise(res, earlier), nil
}

// teller is what the last stage needs to carry out a Decision: Slack, the
// history (nil without one, or when it could not be opened), the check of
// the run lock, the log and the clock, and where the run's notices are
// kept.
type teller struct {
	slack   *alert.Notifier
	history *history.History
	guard   func(ctx context.Context) error // never nil: see lockGuard
	log     *slog.Logger
	now     func() time.Time
	scope   string // the notice scope this run saves under (noticeScopes)
}

// tell carries out dec for rep, in order: the gap alert stage (sendGaps,
// through the history's outbox), the failure notice, then the run's
// record. Everything it does was decided (decide); it reads nothing from
// the history. It returns what failed. After the run's deadline ctx is
// the bounded context Run gives the end of a stopped run (noticeTimeout).
func (t teller) tell(ctx context.Context, dec Decision, rep report.Report) []Failure {
	var fs []Failure
	fail := func(p Part, err error) {
		if err != nil {
			fs = append(fs, Failure{Part: p, Err: err})
		}
	}
	if !dec.LinkReport {
		rep.Link = "" // no message links a report that is not whole in its place
	}
	var slackErr error
	switch {
	case dec.Gaps:
		var out gapOutcome
		if out, slackErr = t.sendGaps(ctx, dec.Send); slackErr != nil {
			t.log.Error("slack failed", "err", slackErr)
		} else {
			t.log.Info("slack", "outcome", out)
		}
	case dec.GapsWhy != "" && t.slack != nil:
		t.log.Info("slack alert skipped", "why", dec.GapsWhy)
	}
	fail(PartSlack, slackErr)
	if slackErr != nil {
		// A notice could not reach Slack either.
		if len(dec.Causes) > 0 {
			t.log.Warn("slack notice skipped: Slack itself failed", "causes", fingerprint(dec.Causes))
		}
	} else {
		postErr, recordErr := t.notice(ctx, dec, rep)
		fail(PartSlack, postErr)
		fail(PartHistory, recordErr)
	}
	if dec.Record {
		recordErr := t.record(ctx, rep)
		fail(PartHistory, recordErr)
		// The trend's word weighs the nights with this one among them. It
		// is one of the night's messages: a failure of it (the history,
		// Slack, or the run stopped as it was told) is the night's, and
		// the outbox settles it on the next.
		if recordErr == nil && dec.Gaps && slackErr == nil {
			fail(t.tellWorse(ctx, rep, trendURL(rep)))
		}
	}
	return fs
}

// noticeTimeout bounds the notice's post and record when the run's own
// deadline has passed: a run stopped by RECON_TIMEOUT still says so.
const noticeTimeout = 15 * time.Second

// notice posts what dec says of the failure notice, once per cause
// (decideNotice), and once when checking works again, through the outbox
// as every message is: its intent recorded before the post, with what it
// records in notices once Slack answered (history.NoticeChange), so that a
// run killed or stopped between the post and the record is settled by the
// next one, never taken as the opposite of what the channel saw. A notice
// nothing remembers (NoticeEveryRun) is only posted. The run lock is not
// needed: a notice repeated by two overlapping runs is harmless, and a
// lock that cannot be taken is often the very failure to tell; nor is the
// outbox's record: a notice the history cannot take is still posted,
// unrecorded, since a silent night is worse than a repeated notice. It
// returns the error of the post, and of the record separately.
func (t teller) notice(ctx context.Context, dec Decision, rep report.Report) (postErr, recordErr error) {
	mem, fp := dec.Memory, fingerprint(dec.Causes)
	var m alert.Message
	kind, change := history.KindNotice, &history.NoticeChange{Scopes: []string{t.scope}, Fingerprint: fp,
		Reason: alert.NoticeReason(dec.Causes), At: t.now()}
	switch dec.Notice {
	case alert.NoticeQuiet:
		if dec.NoticeWhy == "" && len(dec.Causes) > 0 {
			t.log.Info("slack notice not repeated: Slack was told of this cause", "causes", fp, "last_posted", mem.Last.LastPosted)
		}
		return nil, nil
	case alert.NoticeRecovered:
		last, scopes := mem.Last, mem.Open
		if !mem.HadLast {
			last, scopes = mem.Recovered, mem.Unanswered
		}
		m = alert.RenderRecovered(rep, last.Reason, last.FirstPosted, last.Fingerprint == alert.CauseReportUnstored)
		kind, change = history.KindRecovery, &history.NoticeChange{Scopes: scopes, Resolve: true, At: t.now()}
		fp = last.Fingerprint
	default:
		if dec.NoticeTold {
			t.log.Info("slack notice not posted: the gap alert said the report could not be stored", "causes", fp)
			return nil, nil
		}
		m = alert.RenderNotice(rep, dec.Causes, alert.NoticeOf{Action: dec.Notice, First: mem.Last.FirstPosted})
		if dec.Notice == alert.NoticeRemind {
			kind = history.KindReminder
		}
	}
	if dec.NoticeRepeat {
		m = alert.MarkRepeat(m)
	}
	ob := outbox{slack: t.slack, history: t.history, guard: func(context.Context) error { return nil }}
	if dec.Notice == alert.NoticeEveryRun {
		ob.history = nil
	}
	in := history.Intent{Scope: history.NoticeScope(rep.WorkspaceID, t.scope), RunKey: rep.RunKey, Kind: kind,
		Transport: t.slack.Transport(), From: rep.Window.From, To: rep.Window.To, Notice: change}
	_, _, _, err := ob.deliver(ctx, in, m)
	if errors.Is(err, errNotIntended) {
		t.log.Error("the notice is posted without its record: the next run may post it again", "err", err)
		recordErr = err
		ob.history = nil
		_, _, _, err = ob.deliver(ctx, in, m)
	}
	if err != nil {
		t.log.Error("slack "+kind+" failed", "causes", fp, "err", err)
		return err, recordErr
	}
	t.log.Info("slack notice", "action", dec.Notice, "kind", kind, "causes", fp, "repeat", dec.NoticeRepeat)
	return nil, recordErr
}

// record writes the run to the history, all or nothing, while the run
// lock is still this run's.
func (t teller) record(ctx context.Context, rep report.Report) error {
	if err := t.guard(ctx); err != nil {
		t.log.Error("run lock lost: the run is not recorded in the history", "err", err)
		return err
	}
	if err := t.history.RecordRun(ctx, rep); err != nil {
		t.log.Error("run not recorded in the history", "err", err)
		return err
	}
	return nil
}

// lockGuard checks, immediately before a post or a record, that the run
// lock is still this run's: once it is lost another run may hold it, and
// both would post. held nil: no lock to check.
func lockGuard(held func(ctx context.Context) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if held == nil {
			return nil
		}
		return held(ctx)
	}
}
