package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// States of an intended Slack post: the outcome of the post, as Slack
// gave it.
const (
	StatePending = "pending" // recorded before the post; Slack's answer not yet known
	StatePosted  = "posted"  // Slack took it: channel and ts are known (empty for a webhook)
	// StateUnconfirmed: Slack's answer was lost and the post cannot be
	// read back (a webhook): it may be in the channel. What it told counts
	// as told without an answer (Alert.Unconfirmed, Notice.Unconfirmed).
	StateUnconfirmed = "unconfirmed"
	StateAbandoned   = "abandoned" // Slack refused it, or a later run found it never arrived: nothing of it was told
)

// Scope is what de-duplication is kept per: one store of a workspace, in
// one zone. StoreID is the store's identity (see AdoptStoreID).
type Scope struct {
	WorkspaceID string
	StoreID     string
	TZ          string
}

// NoticeScope is the outbox scope of the notices of workspaceID kept under
// scope (a notice scope, as LastNotice takes it): notices are kept in no
// zone, so their posts never wait on a gap alert's, nor the reverse.
func NoticeScope(workspaceID, scope string) Scope {
	return Scope{WorkspaceID: workspaceID, StoreID: scope}
}

// NoticeChange is what a settled post records in notices: a notice told
// (Fingerprint and Reason, under Scopes[0]), or, with Resolve, a recovery
// that resolves the notice of every scope of Scopes. At is when it was
// told. It is applied with the post's outcome, in the same transaction:
// when Slack accepted it (MarkPosted) or its answer was lost
// (MarkUnconfirmed), never when it was refused (Abandon).
type NoticeChange struct {
	Scopes      []string  `json:"scopes"`
	Resolve     bool      `json:"resolve,omitempty"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	At          time.Time `json:"at"`
}

// Intent is a Slack post recorded before it is made: what a run is about
// to tell Slack, so that a run that never learns whether Slack took it (a
// crash, a stalled webhook, SIGTERM, a history that went away) leaves a
// pending row the next run resolves instead of posting the same gap again.
type Intent struct {
	ID int64 // set by Intend
	Scope
	RunKey    string
	Kind      string // KindAlert, KindHealed, KindNotice, ...: a new message
	Transport string // TransportWebhook or TransportBot
	// From and To are the window of the message, YYYY-MM-DD.
	From, To string
	// Alerts are the days the message shows, as MarkPosted records them
	// in the alerts table; their Channel and TS are set by MarkPosted.
	Alerts []Alert
	// Notice is what the post records in notices once settled; nil for
	// none.
	Notice *NoticeChange
	// RepeatOf is the id of the unconfirmed post this one may repeat: a
	// webhook cannot read back whether the earlier post arrived, so what
	// it told is posted once more, marked as a possible repeat. 0 for
	// none, or when the post it may repeat is not known.
	RepeatOf int64
	State    string // set by the history: StatePending, StatePosted, StateUnconfirmed or StateAbandoned
	// Sent says the post was handed to Slack (MarkSent): a pending post
	// never sent told nothing, and is given up (Abandon).
	Sent bool
	// Channel and TS are the message posted, set by MarkPosted (empty for
	// a webhook); for an edit of an earlier message (a bot's chat.update),
	// that message, given to Intend.
	Channel string
	TS      string
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
	Sent        bool   `db:"sent"`
	Channel     string `db:"channel"`
	TS          string `db:"ts"`
	Created     string `db:"created_at"`
	Updated     string `db:"updated_at"`
	Notice      string `db:"notice"`
}

func (r intentRow) intent() (Intent, error) {
	in := Intent{ID: r.ID, Scope: Scope{WorkspaceID: r.WorkspaceID, StoreID: r.StoreID, TZ: r.TZ},
		RunKey: r.RunKey, Kind: r.Kind, Transport: r.Transport, From: r.From, To: r.To,
		RepeatOf: r.RepeatOf, State: r.State, Sent: r.Sent, Channel: r.Channel, TS: r.TS,
		Created: r.Created, Updated: r.Updated}
	if err := json.Unmarshal([]byte(r.Alerts), &in.Alerts); err != nil {
		return Intent{}, fmt.Errorf("read the days of intended post %d: %w", r.ID, err)
	}
	if r.Notice != "" {
		in.Notice = new(NoticeChange)
		if err := json.Unmarshal([]byte(r.Notice), in.Notice); err != nil {
			return Intent{}, fmt.Errorf("read the notice of intended post %d: %w", r.ID, err)
		}
	}
	return in, nil
}

// ErrPending is returned by Intend when a post of the same scope is still
// pending: resolve it (MarkPosted or Abandon) before intending another.
var ErrPending = errors.New("an earlier Slack post of this workspace, store and zone is still pending: resolve it before posting again")

// ErrResolved is returned by MarkSent, MarkPosted and Abandon for a post
// that is no longer pending and was resolved otherwise.
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
	if in.Notice != nil && len(in.Notice.Scopes) == 0 {
		return 0, fmt.Errorf("record intended Slack %s of run %s: its notice names no scope", in.Kind, in.RunKey)
	}
	days := in.Alerts
	if days == nil {
		days = []Alert{}
	}
	b, err := json.Marshal(days)
	if err != nil {
		return 0, fmt.Errorf("record intended Slack %s of run %s: %w", in.Kind, in.RunKey, err)
	}
	var notice []byte
	if in.Notice != nil {
		if notice, err = json.Marshal(in.Notice); err != nil {
			return 0, fmt.Errorf("record intended Slack %s of run %s: %w", in.Kind, in.RunKey, err)
		}
	}
	repeatOf := sql.NullInt64{Int64: in.RepeatOf, Valid: in.RepeatOf != 0}
	var id int64
	err = h.db.GetContext(ctx, &id, h.q.insertIntent, in.WorkspaceID, in.StoreID, in.TZ, in.RunKey,
		in.Kind, in.Transport, in.From, in.To, string(b), repeatOf, string(notice), h.stamp(), in.Channel, in.TS)
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
// channel, Abandon when it is not or was never sent) before it posts
// anything.
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

// MarkSent records that the pending post id is being handed to Slack.
// Call it immediately before the post, and post only when it returns nil:
// a pending post never marked sent told nothing, and the next run gives it
// up (Abandon) instead of counting it as told without an answer. A post no
// longer pending (another run settled it) gives an error wrapping
// ErrResolved.
func (h *History) MarkSent(ctx context.Context, id int64) error {
	res, err := h.db.ExecContext(ctx, h.q.markSent, id, h.stamp())
	if err != nil {
		return fmt.Errorf("mark Slack post %d sent: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("mark Slack post %d sent: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("mark Slack post %d sent: %w", id, ErrResolved)
	}
	return nil
}

// MarkPosted records that the intended post id was taken by Slack as the
// message ts in channel (both empty for a webhook), and, in the same
// transaction, records the message, sets the alerts of its days as
// SaveAlerts does and applies its notice change: a post marked posted
// always counts as told, and confirmed. Marking a post again with the same
// channel and ts does nothing; a post resolved otherwise gives an error
// wrapping ErrResolved.
func (h *History) MarkPosted(ctx context.Context, id int64, channel, ts string) error {
	err := h.settle(ctx, id, StatePosted, channel, ts)
	if err != nil {
		return fmt.Errorf("mark Slack post %d posted: %w", id, err)
	}
	return nil
}

// MarkUnconfirmed records that Slack's answer to the intended post id was
// lost and that the post cannot be read back (a webhook): it may be in the
// channel. In the same transaction its days and its notice change are
// recorded as told without an answer: each state it told counts one more
// lost answer (Alert.Unconfirmed, Notice.Unconfirmed), unless Slack had
// confirmed that very state before. Marking it again does nothing; a post
// resolved otherwise gives an error wrapping ErrResolved.
func (h *History) MarkUnconfirmed(ctx context.Context, id int64) error {
	err := h.settle(ctx, id, StateUnconfirmed, "", "")
	if err != nil {
		return fmt.Errorf("mark Slack post %d unconfirmed: %w", id, err)
	}
	return nil
}

// settle resolves the pending post id as state (StatePosted or
// StateUnconfirmed) and records what it told, in one transaction.
func (h *History) settle(ctx context.Context, id int64, state, channel, ts string) error {
	return h.inTx(ctx, func(tx *sqlx.Tx) error {
		in, err := h.lockIntent(ctx, tx, id)
		if err != nil {
			return err
		}
		switch {
		case in.State == state && in.Channel == channel && in.TS == ts:
			return nil
		case in.State != StatePending:
			return fmt.Errorf("%w: it is %s", ErrResolved, in.State)
		}
		if _, err := tx.ExecContext(ctx, h.q.resolveIntent, id, state, channel, ts, h.stamp()); err != nil {
			return fmt.Errorf("update outbox: %w", err)
		}
		lost := state == StateUnconfirmed
		action := ActionPosted
		if in.TS != "" { // given to Intend: an edit of that message
			action = ActionUpdated
		}
		alerts := make([]Alert, len(in.Alerts))
		for i, a := range in.Alerts {
			a.Channel, a.TS = channel, ts
			alerts[i] = a
		}
		// Its days were told when the post was made, not when a later
		// run settled it: the intent's time, just before the post.
		at := in.Created
		if _, err := time.Parse(time.RFC3339, at); err != nil {
			at = h.stamp()
		}
		if err := h.saveAlerts(ctx, tx, Message{RunKey: in.RunKey, WorkspaceID: in.WorkspaceID, StoreID: in.StoreID,
			TZ: in.TZ, Kind: in.Kind, Action: action, Transport: in.Transport, Channel: channel, TS: ts}, alerts, lost, at); err != nil {
			return err
		}
		return h.applyNotice(ctx, tx, in, lost)
	})
}

// applyNotice records in's notice change, if any, as told (lost: without
// an answer).
func (h *History) applyNotice(ctx context.Context, tx *sqlx.Tx, in Intent, lost bool) error {
	c := in.Notice
	if c == nil {
		return nil
	}
	if !c.Resolve {
		return h.saveNotice(ctx, tx, Notice{WorkspaceID: in.WorkspaceID, StoreID: c.Scopes[0], Fingerprint: c.Fingerprint,
			Reason: c.Reason, RunKey: in.RunKey, LastPosted: c.At}, lost)
	}
	done := map[string]bool{}
	for _, scope := range c.Scopes {
		if done[scope] { // resolved once: a second time would count the lost answer twice
			continue
		}
		done[scope] = true
		if err := h.resolveNotice(ctx, tx, in.WorkspaceID, scope, in.RunKey, c.At, lost); err != nil {
			return err
		}
	}
	return nil
}

// Abandon records that the intended post id was never delivered: Slack
// refused it, a bot found no message carrying its id in the channel, or it
// was never sent. It no longer blocks Intend, and nothing it would have
// told counts as told.
func (h *History) Abandon(ctx context.Context, id int64) error {
	err := h.inTx(ctx, func(tx *sqlx.Tx) error {
		in, err := h.lockIntent(ctx, tx, id)
		if err != nil {
			return err
		}
		switch in.State {
		case StateAbandoned:
			return nil
		case StatePosted, StateUnconfirmed:
			return fmt.Errorf("%w: it is %s", ErrResolved, in.State)
		}
		if _, err := tx.ExecContext(ctx, h.q.resolveIntent, id, StateAbandoned, "", "", h.stamp()); err != nil {
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
// does nothing once adopted). It also records that legacyID is id, for a
// run that cannot ask the store (KnownStoreID).
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
		if _, err := tx.ExecContext(ctx, h.q.rememberStoreID, workspaceID, legacyID, id); err != nil {
			return fmt.Errorf("record the identity of store %s: %w", legacyID, err)
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

// KnownStoreID returns the store identity that workspaceID's store,
// spelled as legacyID, had when a run last identified it (AdoptStoreID),
// and whether one did.
func (h *History) KnownStoreID(ctx context.Context, workspaceID, legacyID string) (string, bool, error) {
	var id string
	err := h.db.GetContext(ctx, &id, h.q.knownStoreID, workspaceID, legacyID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read the identity of store %s: %w", legacyID, err)
	}
	return id, true, nil
}
