package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Notice is what Slack was last told about a workspace and store that
// could not be checked: the causes posted (a fingerprint such as
// "elido:http_401"), when, and whether a later run said checking works
// again. It keeps a failure that lasts from being posted every night.
type Notice struct {
	WorkspaceID string
	StoreID     string
	Fingerprint string // the causes last posted, as the caller names them
	Reason      string // the reason as posted, secrets removed
	RunKey      string // the run that last posted, or resolved the notice
	FirstPosted time.Time
	LastPosted  time.Time
	Resolved    time.Time // zero while the failure lasts
	// Unconfirmed counts the posts whose answer was lost that told the
	// row's state (the notice of Fingerprint while open, the recovery once
	// resolved): 0 once Slack accepted one (see Alert.Unconfirmed).
	Unconfirmed int
}

// Open reports whether the failure n records still lasts.
func (n Notice) Open() bool { return n.Resolved.IsZero() }

type noticeRow struct {
	Fingerprint string `db:"fingerprint"`
	Reason      string `db:"reason"`
	RunKey      string `db:"run_key"`
	Unconfirmed int    `db:"unconfirmed"`
	FirstPosted string `db:"first_posted"`
	LastPosted  string `db:"last_posted"`
	Resolved    string `db:"resolved_at"`
}

// LastNotice returns the notice state of a workspace and store, and false
// when none was ever posted.
func (h *History) LastNotice(ctx context.Context, workspaceID, storeID string) (Notice, bool, error) {
	var r noticeRow
	err := h.db.GetContext(ctx, &r, h.q.notice, workspaceID, storeID)
	if errors.Is(err, sql.ErrNoRows) {
		return Notice{}, false, nil
	}
	if err != nil {
		return Notice{}, false, fmt.Errorf("read the last notice of workspace %s: %w", workspaceID, err)
	}
	n := Notice{WorkspaceID: workspaceID, StoreID: storeID, Fingerprint: r.Fingerprint, Reason: r.Reason, RunKey: r.RunKey, Unconfirmed: r.Unconfirmed}
	for _, f := range []struct {
		s  string
		at *time.Time
	}{{r.FirstPosted, &n.FirstPosted}, {r.LastPosted, &n.LastPosted}, {r.Resolved, &n.Resolved}} {
		if f.s == "" {
			continue
		}
		if *f.at, err = time.Parse(time.RFC3339, f.s); err != nil {
			return Notice{}, false, fmt.Errorf("read the last notice of workspace %s: %w", workspaceID, err)
		}
	}
	return n, true, nil
}

// SaveNotice records that a notice with n's fingerprint and reason was
// posted at n.LastPosted by run n.RunKey, and accepted by Slack. The
// failure's first post is kept while the fingerprint stays the same and
// the notice open. A notice Slack is to hear goes through the outbox
// instead (Intent.Notice), which records it as Slack answered.
func (h *History) SaveNotice(ctx context.Context, n Notice) error {
	return h.saveNotice(ctx, h.db, n, false)
}

// execer is what a statement runs on: the pool or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// saveNotice is SaveNotice on ex; lost says the post's answer was lost.
func (h *History) saveNotice(ctx context.Context, ex execer, n Notice, lost bool) error {
	if n.WorkspaceID == "" || n.Fingerprint == "" || n.RunKey == "" || n.LastPosted.IsZero() {
		return errors.New("record Slack notice: workspace, fingerprint, run key and time are all needed")
	}
	if _, err := ex.ExecContext(ctx, h.q.saveNotice, n.WorkspaceID, n.StoreID, n.Fingerprint, n.Reason, n.RunKey, noticeStamp(n.LastPosted), flag(lost)); err != nil {
		return fmt.Errorf("record Slack notice of run %s: %w", n.RunKey, err)
	}
	return nil
}

// ResolveNotice records that run runKey checked the workspace and store
// again at at, and told Slack so, which accepted it. A notice already
// resolved is left as it is, but for one whose recovery's answer was lost,
// which is confirmed.
func (h *History) ResolveNotice(ctx context.Context, workspaceID, storeID, runKey string, at time.Time) error {
	return h.resolveNotice(ctx, h.db, workspaceID, storeID, runKey, at, false)
}

// resolveNotice is ResolveNotice on ex; lost says the recovery's answer
// was lost.
func (h *History) resolveNotice(ctx context.Context, ex execer, workspaceID, storeID, runKey string, at time.Time, lost bool) error {
	if _, err := ex.ExecContext(ctx, h.q.resolveNotice, workspaceID, storeID, noticeStamp(at), runKey, flag(lost)); err != nil {
		return fmt.Errorf("record that run %s checks workspace %s again: %w", runKey, workspaceID, err)
	}
	return nil
}

func noticeStamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
