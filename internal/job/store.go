package job

import (
	"context"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/store"
)

// progressDays is the window length past which each day's count is
// logged as it is read, so a long backfill shows its progress.
const progressDays = 7

// storeCounts is what the main pass read from the store.
type storeCounts struct {
	local map[reconcile.Date]reconcile.Reading
	// links are the per-link counts of the days whose total differs from
	// Elido's: the drill-down's candidates.
	links map[reconcile.Date]map[string]int64
	// seen are the clicks per link over the whole window: the fallback's
	// link list.
	seen map[string]int64
}

// readStore counts each day in the store, in all and per link. It keeps
// the per-link counts only of the days whose total differs from Elido's,
// and the clicks per link over the whole window, so a long backfill of a
// workspace with many links does not hold every day's links in memory. A
// store that could not be opened (openErr) leaves every day unknown; a
// day whose query fails is left unknown. The first error is returned for
// the exit code.
func readStore(ctx context.Context, d Deps, o Options, st *store.Store, openErr error, api map[reconcile.Date]reconcile.Reading) (storeCounts, error) {
	out := storeCounts{
		local: map[reconcile.Date]reconcile.Reading{},
		links: map[reconcile.Date]map[string]int64{},
		seen:  map[string]int64{},
	}
	days := o.Window.Days()
	if openErr != nil {
		d.Log.Error("store not opened", "err", openErr)
		for _, day := range days {
			out.local[day] = reconcile.Unknown(openErr)
		}
		return out, openErr
	}
	var first error
	started := time.Now()
	for i, day := range days {
		d.Progress.Step("store", i, len(days))
		counts, err := st.Counts(ctx, o.Query, day, o.Window.Loc)
		if err != nil {
			first = firstErr(first, err)
			d.Log.Error("store read failed", "date", day.String(), "err", err)
			out.local[day] = reconcile.Unknown(err)
			continue
		}
		out.local[day] = reconcile.Known(counts.Total)
		if a, ok := api[day]; ok && a.Err == nil && a.Clicks != counts.Total {
			out.links[day] = counts.Links
		}
		for id, n := range counts.Links {
			out.seen[id] += n
		}
		if len(days) > progressDays {
			d.Log.Debug("store day counted", "date", day.String(), "day", i+1, "of", len(days), "clicks", counts.Total)
		}
	}
	d.Progress.Step("store", len(days), len(days))
	d.Log.Info("store read", "days", len(out.local), "links", len(out.seen), "duration_ms", time.Since(started).Milliseconds())
	return out, first
}
