package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/jmoiron/sqlx"
)

// Slack transports, as recorded.
const (
	TransportWebhook = "webhook" // an incoming webhook: no channel, no ts, no edits
	TransportBot     = "bot"     // a bot token: messages can be edited in place
)

// Kinds of Slack message, as recorded. Every kind goes through the same
// outbox (Intend, then MarkPosted, MarkUnconfirmed or Abandon), and the
// history checks none of them: a new kind of message is one constant.
const (
	KindAlert    = "alert"    // a run's report: totals, gaps, findings
	KindUpdate   = "update"   // the numbers of alerted days changed
	KindHealed   = "healed"   // every day of an alert matches now
	KindNotice   = "notice"   // a run could not check, or could not store its report
	KindReminder = "reminder" // the same notice again, a week later
	KindRecovery = "recovery" // checking (or storing reports) works again
)

// Actions on a Slack message, as recorded.
const (
	ActionPosted  = "posted"
	ActionUpdated = "updated" // chat.update of an earlier message
)

// Alert is what Slack was last told about one day of a workspace in a
// zone: the key of de-duplication.
//
// The JSON names are how an intended post (Intent) keeps its days in the
// outbox table: changing one makes pending rows of an older version
// unreadable.
type Alert struct {
	Date     string             `db:"day" json:"day"`
	Status   reconcile.Status   `db:"status" json:"status"` // missing or surplus, as alerted
	Severity reconcile.Severity `db:"severity" json:"severity"`
	API      int64              `db:"api_clicks" json:"api_clicks"` // the counts as alerted
	Local    int64              `db:"local_clicks" json:"local_clicks"`
	Delta    int64              `db:"delta_clicks" json:"delta_clicks"`
	Healed   bool               `db:"healed" json:"healed"` // the day matched after it was alerted
	// Unconfirmed counts the posts whose answer was lost that told this
	// state of the day (its status and numbers, or its heal): 0 once
	// Slack accepted one. A state told once so may not be in the channel,
	// and is told once more, marked as a possible repeat; one told twice
	// so is taken as told. Set by the history, from how each post was
	// settled (MarkPosted, MarkUnconfirmed).
	Unconfirmed int    `db:"unconfirmed" json:"-"`
	Transport   string `db:"transport" json:"transport"`
	// Channel and TS name the newest message that shows the day, the one
	// a later run edits; both are empty for a webhook.
	Channel string `db:"channel" json:"channel"`
	TS      string `db:"ts" json:"ts"`
	// From and To are the window of that message.
	From   string `db:"window_from" json:"window_from"`
	To     string `db:"window_to" json:"window_to"`
	RunKey string `db:"run_key" json:"run_key"` // the run that last set the row
}

// Message is a Slack message a run posted or edited.
type Message struct {
	RunKey      string
	WorkspaceID string
	StoreID     string // the report's store_id
	TZ          string
	Kind        string // KindAlert, KindUpdate or KindHealed
	Action      string // ActionPosted or ActionUpdated
	Transport   string // TransportWebhook or TransportBot
	Channel     string // empty for a webhook
	TS          string
}

// Alerts returns what was last alerted in scope s for each day from from
// to to (YYYY-MM-DD, inclusive), healed days included, by date. Two
// stores of one workspace (a replica and a warehouse, say) each have
// their own alerts.
func (h *History) Alerts(ctx context.Context, s Scope, from, to string) (map[string]Alert, error) {
	var rows []Alert
	if err := h.db.SelectContext(ctx, &rows, h.q.alertsInWindow, s.WorkspaceID, s.StoreID, s.TZ, from, to); err != nil {
		return nil, fmt.Errorf("read alerts of %s to %s: %w", from, to, err)
	}
	byDay := make(map[string]Alert, len(rows))
	for _, a := range rows {
		byDay[a.Date] = a
	}
	return byDay, nil
}

// OpenDays returns, oldest first, the days from from to to (YYYY-MM-DD,
// inclusive) of scope s that Slack was told are gaps and not yet told
// healed, and those whose heal was told once without an answer (see
// Alert.Unconfirmed): the days a run re-checks beyond its window.
func (h *History) OpenDays(ctx context.Context, s Scope, from, to string) ([]string, error) {
	var days []string
	if err := h.db.SelectContext(ctx, &days, h.q.openAlerts, s.WorkspaceID, s.StoreID, s.TZ, from, to); err != nil {
		return nil, fmt.Errorf("read the open alerts of %s to %s: %w", from, to, err)
	}
	return days, nil
}

// MessageAlerts returns the days of scope s whose newest alert is the
// message ts in channel, by date: what an edit of that message has to
// show.
func (h *History) MessageAlerts(ctx context.Context, s Scope, channel, ts string) ([]Alert, error) {
	var rows []Alert
	if err := h.db.SelectContext(ctx, &rows, h.q.alertsOfMessage, s.WorkspaceID, s.StoreID, s.TZ, channel, ts); err != nil {
		return nil, fmt.Errorf("read alerts of message %s in %s: %w", ts, channel, err)
	}
	return rows, nil
}

// SaveAlerts records that m was sent and sets the alert state of the days
// it told Slack about, in one transaction: either history knows about the
// message and every day it showed, or about none of them.
func (h *History) SaveAlerts(ctx context.Context, m Message, alerts []Alert) error {
	err := h.inTx(ctx, func(tx *sqlx.Tx) error { return h.saveAlerts(ctx, tx, m, alerts, false, h.stamp()) })
	if err != nil {
		return fmt.Errorf("record Slack %s of run %s: %w", m.Kind, m.RunKey, err)
	}
	return nil
}

// saveAlerts is SaveAlerts inside the caller's transaction. lost says
// the message's answer was lost (it may be in the channel): the message is
// not recorded as sent, and its days count the lost answer (unconfirmed).
// at is when the message was sent, as the history writes instants: the
// time its days were alerted or told healed.
func (h *History) saveAlerts(ctx context.Context, tx *sqlx.Tx, m Message, alerts []Alert, lost bool, at string) error {
	if !lost {
		if _, err := tx.ExecContext(ctx, h.q.insertMessage,
			m.RunKey, m.WorkspaceID, m.TZ, m.Kind, m.Action, m.Transport, m.Channel, m.TS, at); err != nil {
			return fmt.Errorf("insert message: %w", err)
		}
	}
	for _, a := range alerts {
		if _, err := tx.ExecContext(ctx, h.q.upsertAlert,
			m.WorkspaceID, m.StoreID, m.TZ, a.Date, a.Status, a.Severity, a.API, a.Local, a.Delta,
			a.Healed, a.Transport, a.Channel, a.TS, a.From, a.To, a.RunKey, flag(lost), at); err != nil {
			return fmt.Errorf("save alert of %s: %w", a.Date, err)
		}
	}
	return nil
}

// OtherZone returns the zone, other than s.TZ, that days from from to to
// of s's workspace and store were last alerted under, and true, when none
// of those days was alerted under s.TZ yet: RECON_TZ changed since, so the
// same lost clicks may be alerted again under new dates, and the first
// alert in the new zone says so.
func (h *History) OtherZone(ctx context.Context, s Scope, from, to string) (string, bool, error) {
	var was string
	err := h.db.GetContext(ctx, &was, h.q.otherZone, s.WorkspaceID, s.StoreID, s.TZ, from, to)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read the zone of earlier alerts of %s to %s: %w", from, to, err)
	}
	return was, true, nil
}

// flag is b as the 0 or 1 the history's queries take.
func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
