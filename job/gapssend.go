package job

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
)

// The gap alert stage carried out: the plan posted and recorded through
// the outbox, and what it did, for the run's log line.

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
		// The edit tells its days: through the outbox, as a post, so that
		// a run killed between the edit and its record is not taken to
		// have told nothing (and told the same again).
		var gone bool
		var err error
		if e.Record != nil && t.history != nil {
			gone, err = ob.edit(ctx, editIntent(e), e.Message)
		} else {
			err = t.slack.Update(ctx, e.Channel, e.TS, e.Message)
			gone = alert.Gone(err)
		}
		if gone {
			continue // told below, in a new message
		}
		if err != nil {
			return out, fmt.Errorf("update the Slack alert %s/%s: %w", e.Channel, e.TS, err)
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

// editIntent is the outbox record of the in-place edit e: the days its
// record (e.Record) tells, and the message it changes.
func editIntent(e edit) history.Intent {
	m := *e.Record
	in := history.Intent{Scope: history.Scope{WorkspaceID: m.WorkspaceID, StoreID: m.StoreID, TZ: m.TZ}, RunKey: m.RunKey,
		Kind: m.Kind, Transport: m.Transport, Alerts: e.Rows, Channel: e.Channel, TS: e.TS}
	for _, r := range e.Rows {
		if in.From == "" || r.From < in.From {
			in.From = r.From
		}
		in.To = max(in.To, r.To)
	}
	return in
}
