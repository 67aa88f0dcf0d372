package job

import (
	"context"
	"time"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/store"
)

// identifyTimeout bounds reading the store's identity.
const identifyTimeout = 10 * time.Second

// storeID returns the store's id for the report and for de-duplicating
// alerts: its identity (what the store is, not how STORE_DSN spells it)
// with the query's name, so that an equivalent DSN keeps the alerts of
// the same store. A store not opened, or that cannot say what it is,
// keeps o.StoreID (its DSN's spelling) and returns the error: nothing is
// posted then, since its alerts cannot be matched with certainty.
func storeID(ctx context.Context, d Deps, o Options, st *store.Store) (string, error) {
	if st == nil {
		return o.StoreID, nil // the store's own error already blocks the run's gaps
	}
	// A run being stopped still names its store as a finished one does:
	// two catalog reads, bounded on their own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), identifyTimeout)
	defer cancel()
	id, err := st.Identity(ctx)
	if err != nil {
		d.Log.Error("store not identified: nothing will be posted to Slack", "err", err)
		return o.StoreID, err
	}
	return report.StoreID(id + " " + o.Query.Name()), nil
}

// adoptStoreID moves the alerts and pending posts an earlier version kept
// under the store's DSN-spelled id (o.StoreID) to its identity id, once
// per store, before the alerts are read: a history written before store
// identities keeps its de-duplication. It writes nothing on a dry run,
// without the lock, or when the lock was lost.
func adoptStoreID(ctx context.Context, d Deps, o Options, h *history.History, id string) error {
	if h == nil || o.DryRun || o.Unlocked || id == o.StoreID {
		return nil
	}
	if d.Held != nil {
		if err := d.Held(ctx); err != nil {
			d.Log.Error("run lock lost: nothing will be posted or recorded", "err", err)
			return err
		}
	}
	moved, err := h.AdoptStoreID(ctx, o.WorkspaceID, o.StoreID, id)
	if err != nil {
		d.Log.Error("history not updated to the store's identity: nothing will be posted to Slack", "err", err)
		return err
	}
	if moved > 0 {
		d.Log.Info("history rows moved to the store's identity", "store_id", id, "legacy_store_id", o.StoreID, "rows", moved)
	}
	return nil
}
