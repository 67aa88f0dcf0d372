package job

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/store"
)

// identifyTimeout bounds reading the store's identity.
const identifyTimeout = 10 * time.Second

// identify returns the store's id for the report and for de-duplicating
// alerts: its identity (what the store is, not how STORE_DSN spells it)
// with the query's name, so that an equivalent DSN keeps the alerts of
// the same store. A store not opened returns "": its own error already
// says why. One that cannot say what it is returns the error: nothing is
// posted then, since its alerts cannot be matched with certainty.
func identify(ctx context.Context, log *slog.Logger, st *store.Store, q store.Query) (string, error) {
	if st == nil {
		return "", nil
	}
	// A run being stopped still names its store as a finished one does:
	// two catalog reads, bounded on their own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), identifyTimeout)
	defer cancel()
	id, err := st.Identity(ctx)
	if err != nil {
		log.Error("store not identified: nothing will be posted to Slack", "err", err)
		return "", err
	}
	return report.StoreID(id + " " + q.Name()), nil
}

// adoptStoreID moves the alerts and pending posts an earlier version kept
// under the store's DSN-spelled id (legacy) to its identity id, once per
// store, before the alerts are read: a history written before store
// identities keeps its de-duplication. The lock is checked first; its
// loss is returned as lockErr, the history's failure as err.
func adoptStoreID(ctx context.Context, log *slog.Logger, h *history.History, held func(context.Context) error,
	workspaceID, legacy, id string) (lockErr, err error) {
	if held != nil {
		if err := held(ctx); err != nil {
			log.Error("run lock lost: nothing will be posted or recorded", "err", err)
			return err, nil
		}
	}
	moved, err := h.AdoptStoreID(ctx, workspaceID, legacy, id)
	if err != nil {
		log.Error("history not updated to the store's identity: nothing will be posted to Slack", "err", err)
		return nil, err
	}
	if moved > 0 {
		log.Info("history rows moved to the store's identity", "store_id", id, "legacy_store_id", legacy, "rows", moved)
	}
	return nil, nil
}

// noticeScopes names where the run's failure notice is kept (own) and
// where an open notice it follows may be (chain, own first). A notice is
// kept under what failed, not how STORE_DSN spells it: under the store's
// identity when the run knows it (identity), else under the store not
// identified, by its query's name. So a run whose corrected STORE_DSN
// reaches the store hears the recovery of the notice its failure left,
// and a failure under the old spelling is not taken as told. legacy is
// the DSN-spelled id earlier versions kept notices under: its open notice
// is followed, and resolved, like the others.
func noticeScopes(identity, queryName, legacy string) (own string, chain []string) {
	unidentified := "unidentified store, query " + queryName
	if identity == "" {
		return unidentified, []string{unidentified, legacy}
	}
	return identity, []string{identity, unidentified, legacy}
}

// recall names what the end of a run reads from the history for its
// notice: the run's workspace and store, the notice scopes it follows
// (Chain, the run's own first: noticeScopes) and its window.
type recall struct {
	WorkspaceID string
	StoreID     string
	Chain       []string
	Window      reconcile.Window
	// Slack settles the notice posts an earlier run left pending (a bot
	// reads its channel back); Now is the run's clock.
	Slack *alert.Notifier
	Now   time.Time
}

// remember reads what the decision weighs from the history: the open
// notice among the scopes of r.Chain (or, with none open, the recovery
// told once without an answer), and the zone r.Window's days were last
// alerted in under r.StoreID if it is not the window's. The notice posts
// an earlier run left pending are settled first (resolvePending), so that
// what is read is what Slack answered. h nil: nothing remembers.
func remember(ctx context.Context, log *slog.Logger, h *history.History, r recall) memory {
	var mem memory
	if h == nil {
		return mem
	}
	var recovered []history.Notice
	var scopes []string
	for _, scope := range r.Chain {
		if !slices.Contains(scopes, scope) { // the legacy id may be the identity's
			scopes = append(scopes, scope)
		}
	}
	// Every scope's pending posts are settled before any notice is read:
	// a recovery kept under one scope resolves the notices of others.
	for _, scope := range scopes {
		if _, err := resolvePending(ctx, h, r.Slack, history.NoticeScope(r.WorkspaceID, scope), r.Now); err != nil && mem.Unsettled == nil {
			log.Error("an earlier notice's post is not settled: no notice is posted", "err", err)
			mem.Unsettled = err
		}
	}
	for _, scope := range scopes {
		n, ok, err := h.LastNotice(ctx, r.WorkspaceID, scope)
		if err != nil {
			log.Error("history not read for the last notice", "err", err)
			return memory{ReadErr: err}
		}
		switch {
		case !ok:
		case n.Open():
			if !mem.HadLast {
				mem.Last, mem.HadLast = n, true
			}
			mem.Open = append(mem.Open, scope)
		case n.Unconfirmed > 0:
			recovered = append(recovered, n)
			mem.Unanswered = append(mem.Unanswered, scope)
		}
	}
	if !mem.HadLast && len(recovered) > 0 {
		mem.Recovered, mem.HadRecovered = recovered[0], true
	}
	mem.Remembered = true
	was, changed, err := h.OtherZone(ctx, history.Scope{WorkspaceID: r.WorkspaceID, StoreID: r.StoreID, TZ: r.Window.Loc.String()},
		r.Window.From.String(), r.Window.To.String())
	if err != nil {
		// Only the alert's word on the zone is lost.
		log.Warn("history not read for an earlier zone", "err", err)
	} else if changed {
		mem.ZoneWas = was
	}
	return mem
}
