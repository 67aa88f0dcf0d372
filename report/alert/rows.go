package alert

import (
	"context"
	"time"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
)

// saveAlerts records what Slack already has. The record is written even
// when the run is stopping (SIGTERM, the deadline) right after a post:
// dropping it would post the same alert again on the next run. It is
// bounded on its own.
func saveAlerts(ctx context.Context, h alertHistory, m history.Message, rows []history.Alert) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	return h.SaveAlerts(ctx, m, rows)
}

// saveTimeout bounds one record of a Slack action in the history.
const saveTimeout = 10 * time.Second

// changedRows returns the alert rows of changes reported by the message
// ch/ts: a healed day is marked, a changed one takes its new numbers. from
// and to, when set, are the message's window; else a row keeps its own.
func (n *Notifier) changedRows(rep report.Report, p plan, cs []Change, ch, ts, from, to string) []history.Alert {
	var rows []history.Alert
	for _, c := range cs {
		a := p.prior[c.Date]
		a.RunKey, a.Channel, a.TS = rep.RunKey, ch, ts
		if from != "" {
			a.From, a.To, a.Transport = from, to, n.transport
		}
		switch c.Kind {
		case ChangeHealed:
			a.Healed = true
		case ChangeChanged:
			a.Status, a.Severity = c.Now.Status, c.Now.Severity
			a.API, a.Local, a.Delta = c.Now.API, c.Now.Local, c.Now.Delta
		}
		rows = append(rows, a)
	}
	return rows
}

func (n *Notifier) row(rep report.Report, d report.Day, ch, ts string) history.Alert {
	return history.Alert{
		Date: d.Date, Status: d.Status, Severity: d.Severity, API: *d.API, Local: *d.Local, Delta: *d.Delta,
		Transport: n.transport, Channel: ch, TS: ts, From: rep.Window.From, To: rep.Window.To, RunKey: rep.RunKey,
	}
}

func (n *Notifier) message(rep report.Report, kind, action, ch, ts string) history.Message {
	return history.Message{RunKey: rep.RunKey, WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ,
		Kind: kind, Action: action, Transport: n.transport, Channel: ch, TS: ts}
}
