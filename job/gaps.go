package job

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
)

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

// unconfirmed reports whether any day of cs was last told without Slack
// confirming it (prior): a message telling cs is marked as a possible
// repeat.
func unconfirmed(prior map[string]history.Alert, cs []alert.Change) bool {
	for _, c := range cs {
		if prior[c.Date].Unconfirmed > 0 {
			return true
		}
	}
	return false
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

func updateKind(cs []alert.Change) string {
	for _, c := range cs {
		if c.Kind != alert.ChangeHealed {
			return history.KindUpdate
		}
	}
	return history.KindHealed
}

// gapDays returns the report days of changes.
func gapDays(rep report.Report, cs []alert.Change) []report.Day {
	want := map[string]bool{}
	for _, c := range cs {
		want[c.Date] = true
	}
	var days []report.Day
	for _, d := range rep.Days {
		if want[d.Date] {
			days = append(days, d)
		}
	}
	return days
}

func dates(days []report.Day) []string {
	var ds []string
	for _, d := range days {
		ds = append(ds, d.Date)
	}
	return ds
}

func changeDates(cs []alert.Change) []string {
	var ds []string
	for _, c := range cs {
		ds = append(ds, c.Date)
	}
	return ds
}

// gapOutcome is what the gap alert stage did, for the run's log line.
type gapOutcome struct {
	Transport string // webhook or bot
	// Posted is the kind of the new message posted (alert, update or
	// healed); empty when none was. Channel and TS name it (bot token
	// only).
	Posted  string
	Channel string
	TS      string
	Updated []string // earlier alerts edited in place, as channel/ts
	// The report's settled gaps and heals, by what Slack already knew.
	New, Unchanged, Changed, Healed []string
	CSVAttached                     bool
	Skipped                         string   // why nothing was sent
	Warnings                        []string // what failed without failing the stage
}

// LogValue logs the outcome's non-empty fields.
func (o gapOutcome) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("transport", o.Transport)}
	add := func(key string, v any, set bool) {
		if set {
			attrs = append(attrs, slog.Any(key, v))
		}
	}
	add("posted", o.Posted, o.Posted != "")
	add("channel", o.Channel, o.Channel != "")
	add("ts", o.TS, o.TS != "")
	add("updated", o.Updated, len(o.Updated) > 0)
	add("new", o.New, len(o.New) > 0)
	add("unchanged", o.Unchanged, len(o.Unchanged) > 0)
	add("changed", o.Changed, len(o.Changed) > 0)
	add("healed", o.Healed, len(o.Healed) > 0)
	add("csv_attached", o.CSVAttached, o.CSVAttached)
	add("skipped", o.Skipped, o.Skipped != "")
	add("warnings", o.Warnings, len(o.Warnings) > 0)
	return slog.GroupValue(attrs...)
}

// alertFacts is what the history says Slack was told of the run's window,
// read before the decision (recallAlerts): the alerts of its days, and,
// with a bot token, every day each earlier message the update edits
// shows. Err is why they could not be read (the run lock lost, an earlier
// post not settled, the history unread): the stage then posts nothing.
type alertFacts struct {
	Err error
	// RepeatOf is the last post resolvePending settled as unconfirmed,
	// which a message marked as a possible repeat names; 0 for none.
	RepeatOf int64
	Prior    map[string]history.Alert // by date, the older days' too; nil without history
	Messages map[msgRef][]history.Alert
	// Older are the days before the window re-checked (recheckOlder).
	Older []report.Day
}

// msgRef names a bot message: its channel and ts.
type msgRef struct{ channel, ts string }

// recallAlerts reads what the gap alert stage weighs, once, before
// anything is decided: with the run lock checked first, every post an
// earlier run left pending is settled (resolvePending: the history is
// brought up to what Slack has), then the alerts of rep's window are read
// and, with a bot token, the days each earlier message shows that still
// shows an open gap and a day whose status changed (the message an update
// edits).
func recallAlerts(ctx context.Context, h *history.History, n *alert.Notifier, guard func(context.Context) error, rep report.Report, older []report.Day, now time.Time) alertFacts {
	a := alertFacts{Older: older}
	if err := guard(ctx); err != nil {
		return alertFacts{Err: fmt.Errorf("slack: nothing posted: %w", err)}
	}
	scope := scopeOf(rep)
	var err error
	if a.RepeatOf, err = resolvePending(ctx, h, n, scope, now); err != nil {
		return alertFacts{Err: fmt.Errorf("slack: nothing posted until an earlier post is settled: %w", err)}
	}
	if a.Prior, err = h.Alerts(ctx, scope, rep.Window.From, rep.Window.To); err != nil {
		return alertFacts{Err: fmt.Errorf("slack: %w", err)}
	}
	if len(older) > 0 {
		// Read after the pending posts are settled, as the window's are.
		before, err := h.Alerts(ctx, scope, older[0].Date, older[len(older)-1].Date)
		if err != nil {
			return alertFacts{Err: fmt.Errorf("slack: %w", err)}
		}
		for d, al := range before {
			a.Prior[d] = al
		}
	}
	if n.Transport() != alert.TransportBot {
		return a
	}
	// Only a message that shows a day whose status changed is edited
	// (earlierAlerts): the others are not read.
	edited := map[msgRef]bool{}
	for _, c := range decideGaps(rep, a.Prior, older).news() {
		p := a.Prior[c.Date]
		edited[msgRef{p.Channel, p.TS}] = true
	}
	a.Messages = map[msgRef][]history.Alert{}
	for _, p := range a.Prior {
		k := msgRef{p.Channel, p.TS}
		if _, read := a.Messages[k]; read || !edited[k] || p.Healed || p.TS == "" || p.Channel == "" {
			continue
		}
		rows, err := h.MessageAlerts(ctx, scope, k.channel, k.ts)
		if err != nil {
			return alertFacts{Err: fmt.Errorf("slack: %w", err)}
		}
		a.Messages[k] = rows
	}
	return a
}

// gapSettings are what the gap plan takes from the run's settings.
type gapSettings struct {
	transport string // alert.TransportWebhook or alert.TransportBot
	always    bool   // SLACK_NOTIFY=always: an alert every run
	history   bool   // a history de-duplicates and records (the outbox)
	caveats   alert.Caveats
}

// gapSend is what the gap alert stage does, decided before anything is
// posted (planGaps) and carried out by teller.sendGaps.
type gapSend struct {
	// Err is why nothing may be posted: what the stage weighs could not
	// be read. The stage fails with it.
	Err error
	// Out is the outcome as planned: the days by what Slack knew, and
	// why nothing is sent (Skipped); what Slack answered is added to it.
	Out gapOutcome
	// Alert is the new alert, posted through the outbox; nil: none.
	Alert *newPost
	// Attach is the CSV attached in the alert's thread (bot token); nil:
	// none.
	Attach *attachment
	// Edits are the earlier alerts edited in place (bot token). After
	// an alert, which already reports their days, an edit that fails is a
	// warning. Without one, each edit is recorded (Record, Rows) and one
	// that fails stops the stage, unless its message is gone: its days
	// are then told in one new message, with the other News no edit
	// shows (update).
	Edits []edit
	// News are the days that changed or healed, when no alert is posted:
	// those no edit shows go in one new message (update).
	News []alert.Change

	rep       report.Report
	prior     map[string]history.Alert
	transport string
	repeatOf  int64 // the post a message marked as a possible repeat names (alertFacts.RepeatOf)
}

// newPost is a new message and its outbox record.
type newPost struct {
	Intent  history.Intent
	Message alert.Message
}

// attachment is a file posted in a message's thread.
type attachment struct {
	Name, Title string
	Data        []byte
}

// edit is an earlier alert to edit, what it becomes, and, without a new
// alert, how the edit is recorded.
type edit struct {
	Channel, TS string
	Message     alert.Message
	Dates       []string         // the dates of this run's changes it shows
	Record      *history.Message // nil: not recorded (the new alert records its days)
	Rows        []history.Alert
}

// planGaps decides what the gap alert stage does for rep, given what was
// alerted (a, read by recallAlerts) and csv (the report's CSV for the
// alert's thread). It does no I/O: every choice of the stage is made here.
//
// A new alert is posted when a settled gap is new, or every run with
// SLACK_NOTIFY=always; it shows the days that changed or healed since
// (since) and records every day it shows; with a bot token, csv goes in its
// thread and the earlier alerts of changed or healed days are edited to
// say so. Without a new gap, changed and healed days update the alerts
// that showed them: edited in place with a bot token, else (a webhook, or
// an alert that cannot be edited) one short new message. Days alerted with
// the same numbers, and runs with no settled gap, send nothing.
func planGaps(rep report.Report, csv []byte, a alertFacts, st gapSettings) gapSend {
	s := gapSend{Out: gapOutcome{Transport: st.transport}, rep: rep, prior: a.Prior, transport: st.transport, repeatOf: a.RepeatOf}
	if a.Err != nil {
		s.Err = a.Err
		return s
	}
	p := decideGaps(rep, a.Prior, a.Older)
	s.Out.New, s.Out.Unchanged = dates(p.fresh), dates(p.same)
	s.Out.Changed, s.Out.Healed = changeDates(p.changed), changeDates(p.healed)
	bot := st.transport == alert.TransportBot
	switch {
	case len(p.fresh) > 0 || st.always:
		since := p.news()
		sort.Slice(since, func(i, j int) bool { return since[i].Date < since[j].Date })
		var rows []history.Alert
		for _, d := range append(append(append([]report.Day(nil), p.fresh...), p.same...), gapDays(rep, p.changed)...) {
			rows = append(rows, s.row(d))
		}
		for _, c := range p.healed {
			a := p.prior[c.Date]
			a.Healed, a.RunKey = true, rep.RunKey
			rows = append(rows, a)
		}
		in := s.intent(history.KindAlert, rep.Window.From, rep.Window.To, rows)
		cv := st.caveats
		if len(p.same) > 0 {
			cv.Alerted = map[string]bool{}
			// Only a day Slack confirmed is shown as alerted: one whose
			// posts all lost their answer may never have reached the
			// channel (a webhook cannot read it back), and is shown as a
			// gap.
			for _, d := range p.same {
				if p.prior[d.Date].Unconfirmed == 0 {
					cv.Alerted[d.Date] = true
				}
			}
		}
		m := alert.RenderWith(rep, since, cv)
		if p.repeat {
			m, in.RepeatOf = alert.MarkRepeat(m), a.RepeatOf
		}
		s.Alert = &newPost{Intent: in, Message: m}
		if bot && len(csv) > 0 {
			s.Attach = &attachment{Name: "clickrecon-" + rep.RunKey + ".csv", Title: "Table of run " + rep.RunKey, Data: csv}
		}
		if bot && st.history {
			s.Edits = s.earlierAlerts(p, a.Messages, false)
		}
	case len(p.changed)+len(p.healed) > 0:
		if bot {
			s.Edits = s.earlierAlerts(p, a.Messages, true)
		}
		s.News = p.news()
	case len(p.same) > 0:
		s.Out.Skipped = "already alerted with the same numbers"
	default:
		s.Out.Skipped = "no settled gap"
	}
	return s
}

// update is the one new message that tells the changes loose (those no
// edit shows), in date order, over the window of the alerts that showed
// them.
func (s gapSend) update(loose []alert.Change) newPost {
	loose = append([]alert.Change(nil), loose...)
	sort.Slice(loose, func(i, j int) bool { return loose[i].Date < loose[j].Date })
	from, to := loose[0].Date, loose[len(loose)-1].Date
	for _, c := range loose {
		a := s.prior[c.Date]
		from, to = min(from, a.From), max(to, a.To)
	}
	kind := updateKind(loose)
	u := alert.Update{WorkspaceID: s.rep.WorkspaceID, TZ: s.rep.Window.TZ, From: from, To: to, RunKey: s.rep.RunKey, GeneratedAt: s.rep.GeneratedAt, Days: loose}
	in := s.intent(kind, from, to, s.changedRows(loose, "", "", from, to))
	m := alert.RenderUpdate(u)
	if unconfirmed(s.prior, loose) {
		m, in.RepeatOf = alert.MarkRepeat(m), s.repeatOf
	}
	return newPost{Intent: in, Message: m}
}

// sendGaps carries out s, the gap alert stage as planned (planGaps): the
// new alert through the outbox, its CSV and the edits it makes; or,
// without an alert, the edits and the one update of the news no edit
// shows (what is loose depends on Slack's answers: an edit of a message
// that is gone). It returns what Slack answered. An
// error means the alert, or an update nothing else reports, did not reach
// Slack or is not known to have (errors.Is alert.ErrUnconfirmed); a failure
// to attach the CSV or to edit an earlier alert the new one already
// reports is a warning in the outcome instead.
func (t teller) sendGaps(ctx context.Context, s gapSend) (gapOutcome, error) {
	out := s.Out
	if s.Err != nil {
		return out, s.Err
	}
	ob := outbox{slack: t.slack, history: t.history, guard: t.guard}
	if s.Alert != nil {
		ch, ts, posted, err := ob.deliver(ctx, s.Alert.Intent, s.Alert.Message)
		if posted {
			out.Posted, out.Channel, out.TS = history.KindAlert, ch, ts
		}
		if err != nil {
			return out, fmt.Errorf("post the Slack alert: %w", err)
		}
		if s.Attach != nil {
			if err := t.slack.Attach(ctx, ch, ts, s.Attach.Name, s.Attach.Title, s.Attach.Data); err != nil {
				out.Warnings = append(out.Warnings, "report CSV not attached: "+err.Error())
			} else {
				out.CSVAttached = true
			}
		}
		for _, e := range s.Edits {
			if e.TS == ts {
				continue
			}
			// Best effort: the alert just posted already reports these days.
			if err := t.slack.Update(ctx, e.Channel, e.TS, e.Message); err != nil {
				out.Warnings = append(out.Warnings, fmt.Sprintf("earlier alert %s/%s not updated: %v", e.Channel, e.TS, err))
				continue
			}
			out.Updated = append(out.Updated, e.Channel+"/"+e.TS)
		}
		return out, nil
	}
	inPlace := map[string]bool{}
	for _, e := range s.Edits {
		err := t.slack.Update(ctx, e.Channel, e.TS, e.Message)
		if alert.Gone(err) {
			continue // told below, in a new message
		}
		if err != nil {
			return out, fmt.Errorf("update the Slack alert %s/%s: %w", e.Channel, e.TS, err)
		}
		if err := saveAlerts(ctx, t.history, *e.Record, e.Rows); err != nil {
			return out, fmt.Errorf("the Slack alert %s/%s was updated but not recorded: %w", e.Channel, e.TS, err)
		}
		out.Updated = append(out.Updated, e.Channel+"/"+e.TS)
		for _, d := range e.Dates {
			inPlace[d] = true
		}
	}
	var loose []alert.Change
	for _, c := range s.News {
		if !inPlace[c.Date] {
			loose = append(loose, c)
		}
	}
	if len(loose) == 0 {
		return out, nil
	}
	u := s.update(loose)
	ch, ts, posted, err := ob.deliver(ctx, u.Intent, u.Message)
	if posted {
		out.Posted, out.Channel, out.TS = u.Intent.Kind, ch, ts
	}
	if err != nil {
		return out, fmt.Errorf("post the Slack %s message: %w", u.Intent.Kind, err)
	}
	return out, nil
}

// earlierAlerts returns, for each earlier bot alert showing a day that
// changed or healed, the edit it becomes: all the days it shows (messages,
// read by recallAlerts), with this run's news; recorded when record
// (there is no new alert to record them).
func (s gapSend) earlierAlerts(p gapPlan, messages map[msgRef][]history.Alert, record bool) []edit {
	rep := s.rep
	mine := map[msgRef][]alert.Change{}
	for _, c := range p.news() {
		a := p.prior[c.Date]
		if a.TS == "" || a.Channel == "" { // a webhook alert cannot be edited
			continue
		}
		k := msgRef{a.Channel, a.TS}
		mine[k] = append(mine[k], c)
	}
	now := map[string]report.Day{}
	for _, d := range rep.Days {
		now[d.Date] = d
	}
	news := map[string]alert.Change{}
	for _, c := range p.news() {
		news[c.Date] = c
	}
	var edits []edit
	for k, cs := range mine {
		u := alert.Update{WorkspaceID: rep.WorkspaceID, TZ: rep.Window.TZ, RunKey: rep.RunKey, GeneratedAt: rep.GeneratedAt}
		for _, a := range messages[k] {
			if u.From == "" || a.From < u.From {
				u.From = a.From
			}
			u.To = max(u.To, a.To)
			c, ok := news[a.Date]
			switch {
			case ok:
			case a.Healed:
				c = alert.Change{Date: a.Date, Kind: alert.ChangeHealed, Was: alerted(a)}
			default:
				c = alert.Change{Date: a.Date, Kind: alert.ChangeOpen, Was: alerted(a)}
				if d, ok := now[a.Date]; ok && alert.IsGap(d) {
					c.Now = current(d)
				}
			}
			u.Days = append(u.Days, c)
		}
		e := edit{Channel: k.channel, TS: k.ts, Message: alert.RenderUpdate(u), Dates: changeDates(cs)}
		if record {
			m := s.message(updateKind(cs), history.ActionUpdated, k.channel, k.ts)
			e.Record, e.Rows = &m, s.changedRows(cs, k.channel, k.ts, "", "")
		}
		edits = append(edits, e)
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].TS < edits[j].TS })
	return edits
}

// changedRows returns the alert rows of changes reported by the message
// ch/ts: a healed day is marked, a changed one takes its new numbers. from
// and to, when set, are the message's window; else a row keeps its own.
func (s gapSend) changedRows(cs []alert.Change, ch, ts, from, to string) []history.Alert {
	var rows []history.Alert
	for _, c := range cs {
		a := s.prior[c.Date]
		a.RunKey, a.Channel, a.TS = s.rep.RunKey, ch, ts
		if from != "" {
			a.From, a.To, a.Transport = from, to, s.transport
		}
		switch c.Kind {
		case alert.ChangeHealed:
			a.Healed = true
		case alert.ChangeChanged:
			a.Status, a.Severity = c.Now.Status, c.Now.Severity
			a.API, a.Local, a.Delta = c.Now.API, c.Now.Local, c.Now.Delta
		}
		rows = append(rows, a)
	}
	return rows
}

// row is the alert row of the gap d, shown by the run's alert.
func (s gapSend) row(d report.Day) history.Alert {
	rep := s.rep
	return history.Alert{
		Date: d.Date, Status: d.Status, Severity: d.Severity, API: *d.API, Local: *d.Local, Delta: *d.Delta,
		Transport: s.transport, From: rep.Window.From, To: rep.Window.To, RunKey: rep.RunKey,
	}
}

func (s gapSend) message(kind, action, ch, ts string) history.Message {
	rep := s.rep
	return history.Message{RunKey: rep.RunKey, WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ,
		Kind: kind, Action: action, Transport: s.transport, Channel: ch, TS: ts}
}

// intent is the outbox record of a new message of kind showing rows, for
// the window from..to.
func (s gapSend) intent(kind, from, to string, rows []history.Alert) history.Intent {
	return history.Intent{Scope: scopeOf(s.rep), RunKey: s.rep.RunKey, Kind: kind, Transport: s.transport,
		From: from, To: to, Alerts: rows}
}

// scopeOf is the history scope of rep's alerts: its workspace, store and
// zone.
func scopeOf(rep report.Report) history.Scope {
	return history.Scope{WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ}
}
