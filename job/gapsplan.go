package job

import (
	"sort"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
)

// The gap alert stage's plan: every post, edit and record it makes,
// decided without I/O.

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
			// A day alerted with these numbers is shown as alerted: one
			// Slack confirmed, and one told twice without an answer,
			// which is taken as told (decideGaps). Showing that one as a
			// gap again would tell it a third time.
			for _, d := range p.same {
				cv.Alerted[d.Date] = true
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
