package job

import (
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
)

// The gap alert stage, read → decide → carry out: what Slack was told
// (gapsrecall.go), what a report means for Slack given that (here), what
// the stage sends (gapsplan.go), and its sending (gapssend.go).

// gapPlan is what a report means for Slack, given what was alerted before.
type gapPlan struct {
	fresh   []report.Day   // settled gaps not alerted (or healed since)
	same    []report.Day   // alerted with these very numbers
	changed []alert.Change // alerted with other numbers
	healed  []alert.Change // alerted, and matching now
	prior   map[string]history.Alert
	// repeat says a day the plan tells was told before without Slack
	// confirming it: the message may repeat that post, or follow one the
	// channel never showed, and is marked as a possible repeat.
	repeat bool
}

// decideGaps sorts rep's settled days by what prior (the history's alerts,
// by date; nil without history) says Slack was told. It does no I/O.
//
// De-duplication is by day: the history keeps, for each (workspace,
// store, zone, date), the status and counts last alerted and the message
// (channel, ts) that showed them. A settled gap never alerted, or alerted
// and healed since, is new and makes a run post an alert. A gap alerted
// with the same status and counts is not alerted again. One whose counts
// changed, and one that matches now, update the message that showed it.
// Provisional and unverifiable days are never alerted as gaps and never
// heal anything.
//
// What was told is what Slack accepted, or what a post whose answer was
// lost may have shown (history.Alert.Unconfirmed counts such posts; a post
// Slack refused told nothing). A day whose state (its gap with these
// numbers, or its heal) was told once without an answer is told once more,
// and a day whose alert was never confirmed that changes or heals is told
// so: both in a message marked as a possible repeat. A state told twice
// without an answer is taken as told: a webhook shows it at most twice.
//
// older are days before the report's window that were told as gaps and
// not yet told healed, re-checked by the run (recheckOlder): one that
// matches now is told healed, as a day of the window is; nothing else of
// them is told.
func decideGaps(rep report.Report, prior map[string]history.Alert, older []report.Day) gapPlan {
	p := gapPlan{prior: prior}
	for _, d := range rep.Days {
		a, had := prior[d.Date]
		open := had && !a.Healed
		gap := alert.IsGap(d)
		again := had && a.Unconfirmed == 1 // told once, its answer lost
		mended := d.Settled && d.Status == reconcile.Match && d.API != nil && d.Local != nil
		switch {
		case gap && !open:
			p.fresh = append(p.fresh, d)
		case gap && a.Status == d.Status && a.API == *d.API && a.Local == *d.Local && again:
			p.fresh, p.repeat = append(p.fresh, d), true
		case gap && a.Status == d.Status && a.API == *d.API && a.Local == *d.Local:
			p.same = append(p.same, d)
		case gap:
			p.changed = append(p.changed, alert.Change{Date: d.Date, Kind: alert.ChangeChanged, Was: alerted(a), Now: current(d)})
			p.repeat = p.repeat || a.Unconfirmed > 0
		case mended && (open || a.Healed && again):
			p.healed = append(p.healed, alert.Change{Date: d.Date, Kind: alert.ChangeHealed, Was: alerted(a), Now: current(d)})
			p.repeat = p.repeat || a.Unconfirmed > 0
		}
	}
	for _, d := range older {
		a, had := prior[d.Date]
		mended := d.Settled && d.Status == reconcile.Match && d.API != nil && d.Local != nil
		if had && mended && (!a.Healed || a.Unconfirmed == 1) {
			p.healed = append(p.healed, alert.Change{Date: d.Date, Kind: alert.ChangeHealed, Was: alerted(a), Now: current(d)})
			p.repeat = p.repeat || a.Unconfirmed > 0
		}
	}
	return p
}

// news returns the plan's changes and heals, in that order.
func (p gapPlan) news() []alert.Change {
	return append(append([]alert.Change(nil), p.changed...), p.healed...)
}

func alerted(a history.Alert) alert.State {
	return alert.State{Status: a.Status, Severity: a.Severity, API: a.API, Local: a.Local, Delta: a.Delta}
}

func current(d report.Day) *alert.State {
	s := alert.State{Status: d.Status, Severity: d.Severity, API: *d.API, Local: *d.Local}
	s.Delta = s.Local - s.API
	return &s
}

// scopeOf is the history scope of rep's alerts: its workspace, store and
// zone.
func scopeOf(rep report.Report) history.Scope {
	return history.Scope{WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ}
}
