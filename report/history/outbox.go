package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// States of an intended Slack post.
const (
	StatePending   = "pending"   // recorded before the post; Slack's answer not yet known
	StatePosted    = "posted"    // Slack took it: channel and ts are known (empty for a webhook)
	StateAbandoned = "abandoned" // a later run found it was never delivered, or gave it up
)

// Scope is what de-duplication is kept per: one store of a workspace, in
// one zone. StoreID is the store's identity (see AdoptStoreID).
type Scope struct {
	WorkspaceID string
	StoreID     string
	TZ          string
}

// Intent is a Slack post recorded before it is made: what a run is about
// to tell Slack, so that a run that never learns whether Slack took it (a
// crash, a stalled webhook, SIGTERM, a history that went away) leaves a
// pending row the next run resolves instead of posting the same gap again.
type Intent struct {
	ID int64 // set by Intend
	Scope
	RunKey    string
	Kind      string // KindAlert or KindHealed: a new message
	Transport string // TransportWebhook or TransportBot
	// From and To are the window of the message, YYYY-MM-DD.
	From, To string
	// Alerts are the days the message shows, as MarkPosted records them
	// in the alerts table; their Channel and TS are set by MarkPosted.
	Alerts []Alert
	// RepeatOf is the id of the pending post this one may repeat: a
	// webhook cannot read back whether the earlier post arrived, so it is
	// posted once more, marked as a possible repeat. 0 for none.
	RepeatOf int64
	State    string // set by the history: StatePending, StatePosted or StateAbandoned
	Channel  string // set by MarkPosted; empty for a webhook
	TS       string
	// Created and Updated are RFC 3339 instants in UTC, set by the history.
	Created, Updated string
}

// intentRow is an outbox row as read.
type intentRow struct {
	ID          int64  `db:"id"`
	WorkspaceID string `db:"workspace_id"`
	StoreID     string `db:"store_id"`
	TZ          string `db:"tz"`
	RunKey      string `db:"run_key"`
	Kind        string `db:"kind"`
	Transport   string `db:"transport"`
	From        string `db:"window_from"`
	To          string `db:"window_to"`
	Alerts      string `db:"alerts"`
	RepeatOf    int64  `db:"repeat_of"`
	State       string `db:"state"`
	Channel     string `db:"channel"`
	TS          string `db:"ts"`
	Created     string `db:"created_at"`
	Updated     string `db:"updated_at"`
}

func (r intentRow) intent() (Intent, error) {
	in := Intent{ID: r.ID, Scope: Scope{WorkspaceID: r.WorkspaceID, StoreID: r.StoreID, TZ: r.TZ},
		RunKey: r.RunKey, Kind: r.Kind, Transport: r.Transport, From: r.From, To: r.To,
		RepeatOf: r.RepeatOf, State: r.State, Channel: r.Channel, TS: r.TS,
		Created: r.Created, Updated: r.Updated}
	if err := json.Unmarshal([]byte(r.Alerts), &in.Alerts); err != nil {
		return Intent{}, fmt.Errorf("read the days of intended post %d: %w", r.ID, err)
	}
	return in, nil
}

// ErrPending is returned by Intend when a post of the same scope is still
// pending: resolve it (MarkPosted or Abandon) before intending another.
var ErrPending = errors.New("an earlier Slack post of this workspace, store and zone is still pending: resolve it before posting again")

// ErrResolved is returned by MarkPosted and Abandon for a post that is no
// longer pending and was resolved otherwise.
var ErrResolved = errors.New("the intended Slack post was already resolved")

// Intend records in as pending and returns its id. Call it immediately
// before the post, and post only when it returns nil: an error means the
// history cannot take the row (it is unreachable, read-only, or a grant is
// missing), and a post it does not know of would be repeated by every
// later run. Only the short notice that a check could not run may be sent
// without it.
func (h *History) Intend(ctx context.Context, in Intent) (int64, error) {
	if in.WorkspaceID == "" || in.RunKey == "" || in.Kind == "" || in.Transport == "" || in.From == "" || in.To == "" {
		return 0, fmt.Errorf("record intended Slack post: workspace, run key, kind, transport and window are all needed")
	}
	days := in.Alerts
	if days == nil {
		days = []Alert{}
	}
	b, err := json.Marshal(days)
	if err != nil {
		return 0, fmt.Errorf("record intended Slack %s of run %s: %w", in.Kind, in.RunKey, err)
	}
	repeatOf := sql.NullInt64{Int64: in.RepeatOf, Valid: in.RepeatOf != 0}
	var id int64
	err = h.db.GetContext(ctx, &id, h.q.insertIntent, in.WorkspaceID, in.StoreID, in.TZ, in.RunKey,
		in.Kind, in.Transport, in.From, in.To, string(b), repeatOf)
	if err != nil {
		if uniqueViolation(err) {
			err = ErrPending
		}
		return 0, fmt.Errorf("record intended Slack %s of run %s: %w", in.Kind, in.RunKey, err)
	}
	return id, nil
}

// Pending returns the posts of s still pending, oldest first: those whose
// outcome a run must settle (MarkPosted when the message is found in the
// channel, Abandon when it is not) before it posts anything.
func (h *History) Pending(ctx context.Context, s Scope) ([]Intent, error) {
	var rows []intentRow
	if err := h.db.SelectContext(ctx, &rows, h.q.pendingIntents, s.WorkspaceID, s.StoreID, s.TZ); err != nil {
		return nil, fmt.Errorf("read pending Slack posts of workspace %s: %w", s.WorkspaceID, err)
	}
	out := make([]Intent, 0, len(rows))
	for _, r := range rows {
		in, err := r.intent()
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// MarkPosted records that the intended post id was taken by Slack as the
// message ts in channel (both empty for a webhook), and, in the same
// transaction, records the message and sets the alerts of its days as
// SaveAlerts does: a post marked posted always counts as alerted. Marking
// a post again with the same channel and ts does nothing; a post resolved
// otherwise gives an error wrapping ErrResolved.
func (h *History) MarkPosted(ctx context.Context, id int64, channel, ts string) error {
	err := h.inTx(ctx, func(tx *sqlx.Tx) error {
		in, err := h.lockIntent(ctx, tx, id)
		if err != nil {
			return err
		}
		switch {
		case in.State == StatePosted && in.Channel == channel && in.TS == ts:
			return nil
		case in.State != StatePending:
			return fmt.Errorf("%w: it is %s", ErrResolved, in.State)
		}
		if _, err := tx.ExecContext(ctx, h.q.resolveIntent, id, StatePosted, channel, ts); err != nil {
			return fmt.Errorf("update outbox: %w", err)
		}
		alerts := make([]Alert, len(in.Alerts))
		for i, a := range in.Alerts {
			a.Channel, a.TS = channel, ts
			alerts[i] = a
		}
		return h.saveAlerts(ctx, tx, Message{RunKey: in.RunKey, WorkspaceID: in.WorkspaceID, StoreID: in.StoreID,
			TZ: in.TZ, Kind: in.Kind, Action: ActionPosted, Transport: in.Transport, Channel: channel, TS: ts}, alerts)
	})
	if err != nil {
		return fmt.Errorf("mark Slack post %d posted: %w", id, err)
	}
	return nil
}

// Abandon records that the intended post id was never delivered (a bot
// found no message carrying its id in the channel), or is superseded by a
// new post: it no longer blocks Intend, and its days count as not alerted.
func (h *History) Abandon(ctx context.Context, id int64) error {
	err := h.inTx(ctx, func(tx *sqlx.Tx) error {
		in, err := h.lockIntent(ctx, tx, id)
		if err != nil {
			return err
		}
		switch in.State {
		case StateAbandoned:
			return nil
		case StatePosted:
			return fmt.Errorf("%w: it is posted", ErrResolved)
		}
		if _, err := tx.ExecContext(ctx, h.q.resolveIntent, id, StateAbandoned, "", ""); err != nil {
			return fmt.Errorf("update outbox: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("abandon Slack post %d: %w", id, err)
	}
	return nil
}

// lockIntent reads the intended post id inside tx, which holds it until
// tx ends.
func (h *History) lockIntent(ctx context.Context, tx *sqlx.Tx, id int64) (Intent, error) {
	var r intentRow
	if err := tx.GetContext(ctx, &r, h.q.intent, id); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Intent{}, fmt.Errorf("no intended Slack post %d in the history", id)
		}
		return Intent{}, fmt.Errorf("read outbox: %w", err)
	}
	return r.intent()
}

// uniqueViolation reports whether err is a unique index refusing a row.
func uniqueViolation(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return pqErr.Code == "23505"
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		return liteErr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
	}
	return false
}

// AdoptStoreID moves the alerts and intended posts of workspaceID kept
// under legacyID, the store id of earlier versions (a hash of the store's
// redacted DSN and query name, which changed with the DSN's spelling), to
// id, the store's identity, and returns how many rows moved. It does so
// only while the history knows nothing under id, so it runs once per
// store and never merges two stores' alerts: call it after the lock is
// taken and before the alerts are read, on every run (it is cheap and
// does nothing once adopted).
func (h *History) AdoptStoreID(ctx context.Context, workspaceID, legacyID, id string) (int64, error) {
	if legacyID == id || legacyID == "" {
		return 0, nil
	}
	var moved int64
	err := h.inTx(ctx, func(tx *sqlx.Tx) error {
		var known int64
		if err := tx.GetContext(ctx, &known, h.q.storeRows, workspaceID, id); err != nil {
			return fmt.Errorf("count rows of store %s: %w", id, err)
		}
		if known > 0 {
			return nil
		}
		for _, q := range []string{h.q.adoptAlerts, h.q.adoptOutbox} {
			res, err := tx.ExecContext(ctx, q, workspaceID, legacyID, id)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			moved += n
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("adopt the alerts of store %s as %s: %w", legacyID, id, err)
	}
	return moved, nil
}
