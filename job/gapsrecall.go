package job

import (
	"context"
	"fmt"
	"time"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
)

// The gap alert stage's reading: what the history says Slack was told,
// read once before anything is decided.

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
