package job

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/trend"
)

// The kinds of the worse-trend word in the outbox and its notices.
const (
	KindWorse  = "worse"  // the nights got worse (report/trend's Worse)
	KindPassed = "passed" // the change told has passed
)

// worseAction is what the worse-trend stage posts.
type worseAction int

const (
	worseQuiet  worseAction = iota
	worseTell               // the nights got worse, a way not told yet
	worsePassed             // the change told has passed
)

// decideWorse says whether the worse-trend word is told, given keys, the
// ways the nights got worse now (trend.Keys, "" for none), and what the
// history remembers of the word (last, had): a change is told once, when
// a way of it was not told yet; it is told to have passed once, when none
// is left. As every message, what was told is what Slack accepted or what
// a post whose answer was lost may have shown (Unconfirmed): told once
// without an answer, it is told once more marked as a possible repeat;
// twice, it is taken as told. There is no reminder: the trend page shows
// a change that lasts. It does no I/O.
func decideWorse(keys string, last history.Notice, had bool) (worseAction, bool) {
	open := had && last.Open()
	switch {
	case keys == "" && open:
		return worsePassed, last.Unconfirmed > 0
	case keys == "" && had && last.Unconfirmed == 1:
		return worsePassed, true
	case keys == "":
		return worseQuiet, false
	case !open || !within(keys, last.Fingerprint):
		return worseTell, false
	case last.Unconfirmed == 1:
		return worseTell, true
	}
	return worseQuiet, false
}

// worseScope is the notice scope the worse-trend word of a store and zone
// is kept under: apart from the failure notices of the same store.
func worseScope(storeID, tz string) string { return "trend:" + storeID + ":" + tz }

// worseNights is how many nights up to the window's last day the word
// weighs: the recent ones and their baseline.
const worseNights = trend.RecentDays + trend.BaselineDays

// tellWorse is the last stage of a run that was recorded: the trend of
// the store's last worseNights nights (the history's runs and this one)
// is weighed (trend.Worse), and the word that they got worse, or that the
// change has passed, is told once through the outbox (decideWorse). It
// runs only where the gap alert ran and the run was recorded: the history
// answered, the lock is held, nothing was cut short. What fails is
// logged and returned with its part (the history's or Slack's); the
// night's own messages were already told.
func (t teller) tellWorse(ctx context.Context, rep report.Report, trendURL string) (Part, error) {
	if t.history == nil || t.slack == nil {
		return PartHistory, nil
	}
	last, err := reconcile.ParseDate(rep.Window.To)
	if err != nil {
		return PartHistory, err
	}
	tr, err := trend.New(last.AddDays(-(worseNights - 1)), last)
	if err != nil {
		return PartHistory, err
	}
	if _, err := trend.ReadHistory(ctx, t.history, tr, rep.WorkspaceID); err != nil {
		t.log.Error("the trend was not read: no word on it tonight", "err", err)
		return PartHistory, err
	}
	var signals []trend.Signal
	for _, s := range tr.Series() {
		if s.StoreID == rep.StoreID && s.TZ == rep.Window.TZ {
			signals = trend.Worse(s)
		}
	}
	scope := worseScope(rep.StoreID, rep.Window.TZ)
	hs := history.NoticeScope(rep.WorkspaceID, scope)
	if _, err := resolvePending(ctx, t.history, t.slack, hs, t.now()); err != nil {
		t.log.Error("an earlier trend word's post is not settled: no word on the trend tonight", "err", err)
		return PartHistory, err
	}
	told, had, err := t.history.LastNotice(ctx, rep.WorkspaceID, scope)
	if err != nil {
		t.log.Error("history not read for the trend word", "err", err)
		return PartHistory, err
	}
	keys := trend.Keys(signals)
	action, repeat := decideWorse(keys, told, had)
	if action == worseQuiet {
		if keys != "" {
			t.log.Info("the nights are still worse: told already", "ways", keys, "told", told.LastPosted)
		}
		return PartSlack, nil
	}
	w := alert.Worse{WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ, LastDay: rep.Window.To,
		Since: told.FirstPosted, TrendURL: trendURL}
	var says []string
	for _, s := range signals {
		says = append(says, s.Says)
	}
	w.Says = says
	in := history.Intent{Scope: hs, RunKey: rep.RunKey, Transport: t.slack.Transport(), From: rep.Window.From, To: rep.Window.To}
	var m alert.Message
	if action == worseTell {
		m = alert.RenderWorse(w)
		in.Kind, in.Notice = KindWorse, &history.NoticeChange{Scopes: []string{scope}, Fingerprint: keys, Reason: strings.Join(says, "; "), At: t.now()}
	} else {
		m = alert.RenderPassed(w)
		in.Kind, in.Notice = KindPassed, &history.NoticeChange{Scopes: []string{scope}, Resolve: true, At: t.now()}
	}
	if repeat {
		m = alert.MarkRepeat(m)
	}
	ob := outbox{slack: t.slack, history: t.history, guard: t.guard}
	if _, _, _, err := ob.deliver(ctx, in, m); err != nil {
		if errors.Is(err, errNotIntended) {
			t.log.Error("the trend word is not posted: the history could not record it first", "err", err)
			return PartHistory, err
		}
		t.log.Error("slack trend word failed", "kind", in.Kind, "err", err)
		return PartSlack, err
	}
	t.log.Info("slack trend word", "kind", in.Kind, "ways", keys, "repeat", repeat)
	return PartSlack, nil
}

// trendURL is serve's trend page of rep's workspace, beside rep's
// report.html, "" when the report is not linked (RECON_REPORT_URL unset).
func trendURL(rep report.Report) string {
	base, ok := strings.CutSuffix(rep.Link, "/"+rep.RunKey+"/report.html")
	if rep.Link == "" || !ok {
		return ""
	}
	return base + "/trend?workspace=" + url.QueryEscape(rep.WorkspaceID)
}
