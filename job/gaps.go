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
func decideGaps(rep report.Report, prior map[string]history.Alert) gapPlan {
	p := gapPlan{prior: prior}
	for _, d := range rep.Days {
		a, had := prior[d.Date]
		open := had && !a.Healed
		gap := alert.IsGap(d)
		switch {
		case gap && !open:
			p.fresh = append(p.fresh, d)
		case gap && a.Status == d.Status && a.API == *d.API && a.Local == *d.Local:
			p.same = append(p.same, d)
		case gap:
			p.changed = append(p.changed, alert.Change{Date: d.Date, Kind: alert.ChangeChanged, Was: alerted(a), Now: current(d)})
		case open && d.Settled && d.Status == reconcile.Match && d.API != nil && d.Local != nil:
			p.healed = append(p.healed, alert.Change{Date: d.Date, Kind: alert.ChangeHealed, Was: alerted(a), Now: current(d)})
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

// gaps is the gap alert stage: Slack, the history (nil without one), the
// check of the run lock (never nil) and the clock.
type gaps struct {
	slack   *alert.Notifier
	history *history.History
	guard   func(ctx context.Context) error
	now     func() time.Time
}

// send tells Slack what rep means: it posts an alert when a settled gap is
// new (or always, with SLACK_NOTIFY=always), updates earlier alerts whose
// days changed or healed (decideGaps), and stays silent when everything
// was already said. Without history every run alerts on what it finds.
// With a bot token, csv (the report's links.csv, or days.csv without
// links) is attached in the alert's thread, and earlier alerts are edited
// in place; with a webhook their news is one short new message. cv is what
// the alert must say of itself (the report not stored, the zone changed).
//
// Call it after the report is written and before the run is recorded,
// never on a dry run. A nil Notifier (no Slack configured) sends nothing.
// The guard (the run lock still held) is checked before anything is
// posted.
//
// With history, every new message goes through the outbox (see
// outbox.deliver), and a post left pending by an earlier run is settled
// first (resolvePending). An error means the alert, or an update nothing else
// reports, did not reach Slack or is not known to have (errors.Is
// alert.ErrUnconfirmed); a failure to attach the CSV or to edit an
// earlier alert that the new one already reports is a warning in the
// outcome instead.
func (g gaps) send(ctx context.Context, rep report.Report, csv []byte, cv alert.Caveats) (gapOutcome, error) {
	if g.slack == nil {
		return gapOutcome{Skipped: "Slack is not configured"}, nil
	}
	out := gapOutcome{Transport: g.slack.Transport()}
	ob := outbox{slack: g.slack, history: g.history, guard: g.guard}
	var prior map[string]history.Alert
	if g.history != nil {
		if err := g.guard(ctx); err != nil {
			return out, fmt.Errorf("slack: nothing posted: %w", err)
		}
		var err error
		if ob.repeatOf, err = resolvePending(ctx, g.history, g.slack, scopeOf(rep), g.now()); err != nil {
			return out, fmt.Errorf("slack: nothing posted until an earlier post is settled: %w", err)
		}
		prior, err = g.history.Alerts(ctx, rep.WorkspaceID, rep.StoreID, rep.Window.TZ, rep.Window.From, rep.Window.To)
		if err != nil {
			return out, fmt.Errorf("slack: %w", err)
		}
	}
	p := decideGaps(rep, prior)
	out.New, out.Unchanged = dates(p.fresh), dates(p.same)
	out.Changed, out.Healed = changeDates(p.changed), changeDates(p.healed)
	switch {
	case len(p.fresh) > 0 || g.slack.Always():
		return g.sendAlert(ctx, rep, csv, ob, p, cv, out)
	case len(p.changed)+len(p.healed) > 0:
		return g.sendUpdates(ctx, rep, ob, p, out)
	case len(p.same) > 0:
		out.Skipped = "already alerted with the same numbers"
	default:
		out.Skipped = "no settled gap"
	}
	return out, nil
}

// bot reports whether Slack is reached with a bot token: messages can be
// edited and files attached.
func (g gaps) bot() bool { return g.slack.Transport() == alert.TransportBot }

// sendAlert posts rep's alert, records it, attaches the CSV and edits the
// earlier alerts of the days that changed or healed.
func (g gaps) sendAlert(ctx context.Context, rep report.Report, csv []byte, ob outbox, p gapPlan, cv alert.Caveats, out gapOutcome) (gapOutcome, error) {
	since := p.news()
	sort.Slice(since, func(i, j int) bool { return since[i].Date < since[j].Date })

	// The earlier alerts to edit are read before this one is recorded,
	// which moves the days it shows away from them.
	var edits []earlier
	if g.bot() && g.history != nil {
		var err error
		if edits, err = g.earlierAlerts(ctx, rep, p); err != nil {
			return out, err
		}
	}

	var rows []history.Alert
	for _, d := range append(append(append([]report.Day(nil), p.fresh...), p.same...), gapDays(rep, p.changed)...) {
		rows = append(rows, g.row(rep, d))
	}
	for _, c := range p.healed {
		a := p.prior[c.Date]
		a.Healed, a.RunKey = true, rep.RunKey
		rows = append(rows, a)
	}
	in := g.intent(rep, history.KindAlert, rep.Window.From, rep.Window.To, rows)
	ch, ts, posted, err := ob.deliver(ctx, in, alert.RenderWith(rep, since, cv))
	if posted {
		out.Posted, out.Channel, out.TS = history.KindAlert, ch, ts
	}
	if err != nil {
		return out, fmt.Errorf("post the Slack alert: %w", err)
	}
	if g.bot() && len(csv) > 0 {
		err := g.slack.Attach(ctx, ch, ts, "clickrecon-"+rep.RunKey+".csv", "Table of run "+rep.RunKey, csv)
		if err != nil {
			out.Warnings = append(out.Warnings, "report CSV not attached: "+err.Error())
		} else {
			out.CSVAttached = true
		}
	}
	for _, e := range edits {
		if e.ts == ts {
			continue
		}
		// Best effort: the alert just posted already reports these days.
		if err := g.slack.Update(ctx, e.channel, e.ts, alert.RenderUpdate(e.update)); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("earlier alert %s/%s not updated: %v", e.channel, e.ts, err))
			continue
		}
		out.Updated = append(out.Updated, e.channel+"/"+e.ts)
	}
	return out, nil
}

// sendUpdates reports days whose numbers changed or that healed, when no
// alert is posted: with a bot token each earlier alert is edited in place;
// with a webhook, or for an alert that cannot be edited, one short message
// is posted.
func (g gaps) sendUpdates(ctx context.Context, rep report.Report, ob outbox, p gapPlan, out gapOutcome) (gapOutcome, error) {
	var loose []alert.Change // to report in a new message
	if g.bot() {
		edits, err := g.earlierAlerts(ctx, rep, p)
		if err != nil {
			return out, err
		}
		inPlace := map[string]bool{}
		for _, e := range edits {
			err := g.slack.Update(ctx, e.channel, e.ts, alert.RenderUpdate(e.update))
			if alert.Gone(err) {
				continue // reported below, in a new message
			}
			if err != nil {
				return out, fmt.Errorf("update the Slack alert %s/%s: %w", e.channel, e.ts, err)
			}
			m := g.message(rep, updateKind(e.mine), history.ActionUpdated, e.channel, e.ts)
			if err := saveAlerts(ctx, g.history, m, g.changedRows(rep, p, e.mine, e.channel, e.ts, "", "")); err != nil {
				return out, fmt.Errorf("the Slack alert %s/%s was updated but not recorded: %w", e.channel, e.ts, err)
			}
			out.Updated = append(out.Updated, e.channel+"/"+e.ts)
			for _, c := range e.mine {
				inPlace[c.Date] = true
			}
		}
		for _, c := range p.news() {
			if !inPlace[c.Date] {
				loose = append(loose, c)
			}
		}
	} else {
		loose = p.news()
	}
	if len(loose) == 0 {
		return out, nil
	}
	sort.Slice(loose, func(i, j int) bool { return loose[i].Date < loose[j].Date })
	from, to := loose[0].Date, loose[len(loose)-1].Date
	for _, c := range loose {
		a := p.prior[c.Date]
		from, to = min(from, a.From), max(to, a.To)
	}
	kind := updateKind(loose)
	u := alert.Update{WorkspaceID: rep.WorkspaceID, TZ: rep.Window.TZ, From: from, To: to, RunKey: rep.RunKey, GeneratedAt: rep.GeneratedAt, Days: loose}
	in := g.intent(rep, kind, from, to, g.changedRows(rep, p, loose, "", "", from, to))
	ch, ts, posted, err := ob.deliver(ctx, in, alert.RenderUpdate(u))
	if posted {
		out.Posted, out.Channel, out.TS = kind, ch, ts
	}
	if err != nil {
		return out, fmt.Errorf("post the Slack %s message: %w", kind, err)
	}
	return out, nil
}

// earlier is an earlier alert to edit, and what it becomes.
type earlier struct {
	channel, ts string
	mine        []alert.Change // the changes of this run it shows
	update      alert.Update
}

// earlierAlerts returns, for each earlier bot alert showing a day that
// changed or healed, the Update it becomes: all the days it shows, with
// this run's news.
func (g gaps) earlierAlerts(ctx context.Context, rep report.Report, p gapPlan) ([]earlier, error) {
	type key struct{ channel, ts string }
	mine := map[key][]alert.Change{}
	for _, c := range p.news() {
		a := p.prior[c.Date]
		if a.TS == "" || a.Channel == "" { // a webhook alert cannot be edited
			continue
		}
		k := key{a.Channel, a.TS}
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
	var edits []earlier
	for k, cs := range mine {
		rows, err := g.history.MessageAlerts(ctx, rep.WorkspaceID, rep.StoreID, rep.Window.TZ, k.channel, k.ts)
		if err != nil {
			return nil, fmt.Errorf("slack: %w", err)
		}
		u := alert.Update{WorkspaceID: rep.WorkspaceID, TZ: rep.Window.TZ, RunKey: rep.RunKey, GeneratedAt: rep.GeneratedAt}
		for _, a := range rows {
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
		edits = append(edits, earlier{channel: k.channel, ts: k.ts, mine: cs, update: u})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].ts < edits[j].ts })
	return edits, nil
}

// changedRows returns the alert rows of changes reported by the message
// ch/ts: a healed day is marked, a changed one takes its new numbers. from
// and to, when set, are the message's window; else a row keeps its own.
func (g gaps) changedRows(rep report.Report, p gapPlan, cs []alert.Change, ch, ts, from, to string) []history.Alert {
	var rows []history.Alert
	for _, c := range cs {
		a := p.prior[c.Date]
		a.RunKey, a.Channel, a.TS = rep.RunKey, ch, ts
		if from != "" {
			a.From, a.To, a.Transport = from, to, g.slack.Transport()
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

// row is the alert row of the gap d, shown by rep's alert.
func (g gaps) row(rep report.Report, d report.Day) history.Alert {
	return history.Alert{
		Date: d.Date, Status: d.Status, Severity: d.Severity, API: *d.API, Local: *d.Local, Delta: *d.Delta,
		Transport: g.slack.Transport(), From: rep.Window.From, To: rep.Window.To, RunKey: rep.RunKey,
	}
}

func (g gaps) message(rep report.Report, kind, action, ch, ts string) history.Message {
	return history.Message{RunKey: rep.RunKey, WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ,
		Kind: kind, Action: action, Transport: g.slack.Transport(), Channel: ch, TS: ts}
}

// intent is the outbox record of a new message of kind showing rows, for
// the window from..to.
func (g gaps) intent(rep report.Report, kind, from, to string, rows []history.Alert) history.Intent {
	return history.Intent{Scope: scopeOf(rep), RunKey: rep.RunKey, Kind: kind, Transport: g.slack.Transport(),
		From: from, To: to, Alerts: rows}
}

// scopeOf is the history scope of rep's alerts: its workspace, store and
// zone.
func scopeOf(rep report.Report) history.Scope {
	return history.Scope{WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ}
}
