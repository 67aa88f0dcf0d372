package alert

import (
	"context"
	"fmt"
	"log/slog"
	"sort"

	"github.com/slack-go/slack"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
)

// Outcome is what Send did, for the run's log line.
type Outcome struct {
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
	Warnings                        []string // what failed without failing the send
}

// LogValue logs the outcome's non-empty fields.
func (o Outcome) LogValue() slog.Value {
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

// alertHistory is what the notifier needs of the run history: what was
// alerted before, a record of each new post made before it is made
// (Intend) and after Slack took it (MarkPosted), and a record of edits.
type alertHistory interface {
	Alerts(ctx context.Context, workspaceID, storeID, tz, from, to string) (map[string]history.Alert, error)
	MessageAlerts(ctx context.Context, workspaceID, storeID, tz, channel, ts string) ([]history.Alert, error)
	SaveAlerts(ctx context.Context, m history.Message, alerts []history.Alert) error
	Intend(ctx context.Context, in history.Intent) (int64, error)
	Pending(ctx context.Context, s history.Scope) ([]history.Intent, error)
	MarkPosted(ctx context.Context, id int64, channel, ts string) error
	Abandon(ctx context.Context, id int64) error
}

// Guard is checked immediately before Send settles an earlier post and
// before each new post: an error (the run's lock was lost, so another run
// may be posting) means nothing more is posted.
type Guard func(ctx context.Context) error

// Send tells Slack what rep means: it posts an alert when a settled gap is
// new (or always, with SLACK_NOTIFY=always), updates earlier alerts whose
// days changed or healed, and stays silent when everything was already
// said. h is the run history (a *history.History), nil without one. With
// a bot token, csv (the report's links.csv, or days.csv without links) is attached in the alert's
// thread.
//
// Call it after the report is written and before the run is recorded,
// never on a dry run. A nil Notifier (no Slack configured) sends nothing.
// guards (the run lock still held) are checked before anything is posted.
//
// With history, every new message is delivered through the outbox
// (deliver): recorded as pending before it is posted, marked posted when
// Slack answers. A history that cannot take the pending row means no
// post. A post left pending by an earlier run is settled first
// (resolvePending): with a bot token it is looked for in the channel
// through its metadata and adopted if found, so a gap is alerted exactly
// once; a webhook cannot be read back, so its gap is posted once more,
// marked as a possible repeat. A post whose answer never came stays
// pending, for the next run to settle. An error means the alert, or an
// update nothing else reports, did not reach Slack or is not known to
// have (errors.Is ErrUnconfirmed); a failure to attach the CSV or to edit
// an earlier alert that the new one already reports is a warning in the
// Outcome instead.
func (n *Notifier) Send(ctx context.Context, rep report.Report, csv []byte, h alertHistory, guards ...Guard) (Outcome, error) {
	return n.SendWith(ctx, rep, csv, h, Caveats{}, guards...)
}

// SendWith is Send, with what the alert must say of itself (cv): the
// report not stored, the zone changed.
func (n *Notifier) SendWith(ctx context.Context, rep report.Report, csv []byte, h alertHistory, cv Caveats, guards ...Guard) (Outcome, error) {
	if n == nil {
		return Outcome{Skipped: "Slack is not configured"}, nil
	}
	if hh, ok := h.(*history.History); ok && hh == nil {
		h = nil // a nil *history.History is no history
	}
	out := Outcome{Transport: n.transport}
	dl := delivery{guard: allOf(guards)}
	var prior map[string]history.Alert
	if h != nil {
		if err := dl.guard(ctx); err != nil {
			return out, fmt.Errorf("slack: nothing posted: %w", err)
		}
		var err error
		if dl.repeatOf, err = n.resolve(ctx, h, rep); err != nil {
			return out, fmt.Errorf("slack: nothing posted until an earlier post is settled: %w", err)
		}
		prior, err = h.Alerts(ctx, rep.WorkspaceID, rep.StoreID, rep.Window.TZ, rep.Window.From, rep.Window.To)
		if err != nil {
			return out, fmt.Errorf("slack: %w", err)
		}
	}
	p := decide(rep, prior)
	out.New, out.Unchanged = dates(p.fresh), dates(p.same)
	out.Changed, out.Healed = changeDates(p.changed), changeDates(p.healed)
	switch {
	case len(p.fresh) > 0 || n.notify == NotifyAlways:
		return n.sendAlert(ctx, rep, csv, h, dl, p, cv, out)
	case len(p.changed)+len(p.healed) > 0:
		return n.sendUpdates(ctx, rep, h, dl, p, out)
	case len(p.same) > 0:
		out.Skipped = "already alerted with the same numbers"
	default:
		out.Skipped = "no settled gap"
	}
	return out, nil
}

// sendAlert posts rep's alert, records it, attaches the CSV and edits the
// earlier alerts of the days that changed or healed.
func (n *Notifier) sendAlert(ctx context.Context, rep report.Report, csv []byte, h alertHistory, dl delivery, p plan, cv Caveats, out Outcome) (Outcome, error) {
	since := append(append([]Change(nil), p.changed...), p.healed...)
	sort.Slice(since, func(i, j int) bool { return since[i].Date < since[j].Date })

	// The earlier alerts to edit are read before this one is recorded,
	// which moves the days it shows away from them.
	var edits []earlier
	if n.api != nil && h != nil {
		var err error
		if edits, err = n.earlierAlerts(ctx, rep, h, p); err != nil {
			return out, err
		}
	}

	var rows []history.Alert
	for _, d := range append(append(append([]report.Day(nil), p.fresh...), p.same...), gapDays(rep, p.changed)...) {
		rows = append(rows, n.row(rep, d, "", ""))
	}
	for _, c := range p.healed {
		a := p.prior[c.Date]
		a.Healed, a.RunKey = true, rep.RunKey
		rows = append(rows, a)
	}
	in := n.intent(rep, history.KindAlert, rep.Window.From, rep.Window.To, rows)
	ch, ts, posted, err := n.deliver(ctx, h, dl, in, checked(RenderWith(rep, since, cv)))
	if posted {
		out.Posted, out.Channel, out.TS = history.KindAlert, ch, ts
	}
	if err != nil {
		return out, fmt.Errorf("post the Slack alert: %w", err)
	}
	if n.api != nil && len(csv) > 0 {
		err := n.attach(ctx, ch, ts, "clickrecon-"+rep.RunKey+".csv", "Table of run "+rep.RunKey, csv)
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
		if err := n.updateMessage(ctx, e.channel, e.ts, checked(RenderUpdate(e.update))); err != nil {
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
func (n *Notifier) sendUpdates(ctx context.Context, rep report.Report, h alertHistory, dl delivery, p plan, out Outcome) (Outcome, error) {
	var loose []Change // to report in a new message
	if n.api != nil {
		edits, err := n.earlierAlerts(ctx, rep, h, p)
		if err != nil {
			return out, err
		}
		inPlace := map[string]bool{}
		for _, e := range edits {
			err := n.updateMessage(ctx, e.channel, e.ts, checked(RenderUpdate(e.update)))
			if isGone(err) {
				continue // reported below, in a new message
			}
			if err != nil {
				return out, fmt.Errorf("update the Slack alert %s/%s: %w", e.channel, e.ts, err)
			}
			m := n.message(rep, updateKind(e.mine), history.ActionUpdated, e.channel, e.ts)
			if err := saveAlerts(ctx, h, m, n.changedRows(rep, p, e.mine, e.channel, e.ts, "", "")); err != nil {
				return out, fmt.Errorf("the Slack alert %s/%s was updated but not recorded: %w", e.channel, e.ts, err)
			}
			out.Updated = append(out.Updated, e.channel+"/"+e.ts)
			for _, c := range e.mine {
				inPlace[c.Date] = true
			}
		}
		for _, c := range append(append([]Change(nil), p.changed...), p.healed...) {
			if !inPlace[c.Date] {
				loose = append(loose, c)
			}
		}
	} else {
		loose = append(append(loose, p.changed...), p.healed...)
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
	u := Update{WorkspaceID: rep.WorkspaceID, TZ: rep.Window.TZ, From: from, To: to, RunKey: rep.RunKey, GeneratedAt: rep.GeneratedAt, Days: loose}
	in := n.intent(rep, kind, from, to, n.changedRows(rep, p, loose, "", "", from, to))
	ch, ts, posted, err := n.deliver(ctx, h, dl, in, checked(RenderUpdate(u)))
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
	mine        []Change // the changes of this run it shows
	update      Update
}

// earlierAlerts returns, for each earlier bot alert showing a day that
// changed or healed, the Update it becomes: all the days it shows, with
// this run's news.
func (n *Notifier) earlierAlerts(ctx context.Context, rep report.Report, h alertHistory, p plan) ([]earlier, error) {
	type key struct{ channel, ts string }
	mine := map[key][]Change{}
	for _, c := range append(append([]Change(nil), p.changed...), p.healed...) {
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
	news := map[string]Change{}
	for _, c := range append(append([]Change(nil), p.changed...), p.healed...) {
		news[c.Date] = c
	}
	var edits []earlier
	for k, cs := range mine {
		rows, err := h.MessageAlerts(ctx, rep.WorkspaceID, rep.StoreID, rep.Window.TZ, k.channel, k.ts)
		if err != nil {
			return nil, fmt.Errorf("slack: %w", err)
		}
		u := Update{WorkspaceID: rep.WorkspaceID, TZ: rep.Window.TZ, RunKey: rep.RunKey, GeneratedAt: rep.GeneratedAt}
		for _, a := range rows {
			if u.From == "" || a.From < u.From {
				u.From = a.From
			}
			u.To = max(u.To, a.To)
			c, ok := news[a.Date]
			switch {
			case ok:
			case a.Healed:
				c = Change{Date: a.Date, Kind: ChangeHealed, Was: alerted(a)}
			default:
				c = Change{Date: a.Date, Kind: ChangeOpen, Was: alerted(a)}
				if d, ok := now[a.Date]; ok && isGap(d) {
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

// post posts m by the configured transport, with extra options for a bot
// post (its metadata). A webhook returns no channel and no ts.
func (n *Notifier) post(ctx context.Context, m Message, extra ...slack.MsgOption) (string, string, error) {
	if n.api == nil {
		return "", "", n.postWebhook(ctx, m)
	}
	return n.postMessage(ctx, n.channel, m, extra...)
}

// checked returns m, or the bare fallback text if m broke a Slack limit:
// an alert must not be lost to invalid_blocks.
func checked(m Message) Message {
	if m.Validate() != nil {
		return minimal(m)
	}
	return m
}

// isGone reports whether a chat.update failed because the message can no
// longer be edited (deleted, archived channel, too old): its news is then
// posted as a new message instead.
func isGone(err error) bool {
	switch slackCode(err) {
	case "message_not_found", "cant_update_message", "edit_window_closed", "channel_not_found", "is_archived", "not_in_channel":
		return true
	}
	return false
}
