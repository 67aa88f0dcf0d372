package job

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/store"
)

// storeChunkDays bounds the days whose totals are read in one call, so a
// long backfill shows its progress; each call is one read-only
// transaction.
const storeChunkDays = elidoChunkDays

// chunkDays is how many days readTotals hands Totals at once. The daily
// preset reads a whole call's days in one GROUP BY statement, and one
// statement over the window costs the database what its own count costs
// (a year: 1.4x the floor, against 2.2x in 31-day calls), so it gets the
// whole window in one call and its progress in one step.
func chunkDays(q store.Query, days int) int {
	if q.Name() == store.PresetDaily {
		return max(days, 1)
	}
	return storeChunkDays
}

// storeRead is what readTotals needs.
type storeRead struct {
	store    *store.Store
	query    store.Query
	window   reconcile.Window
	log      *slog.Logger
	progress Progress
}

// readTotals reads each day's total from the store: the main pass, one
// count(*) or sum(clicks) per day (store.Store.Totals), never the per-link
// counts, which only the days that differ need (drillDown). A day whose
// query fails is left unknown. The first error is returned for the exit
// code.
func readTotals(ctx context.Context, r storeRead) (map[reconcile.Date]reconcile.Reading, error) {
	local := map[reconcile.Date]reconcile.Reading{}
	days := r.window.Days()
	var first error
	// A failure that hits every day (a missing table, a query that does
	// not fit) is logged once with the days it hit, not once a day: the
	// days are told apart by their error with the day's own date taken
	// out ("count clicks for 2026-01-01: ..."), and the first day's error
	// is the one shown.
	failed := map[string][]reconcile.Date{}
	shown := map[string]string{}
	var causes []string
	started := time.Now()
	size := chunkDays(r.query, len(days))
	chunks := (len(days) + size - 1) / size
	for i := 0; i < chunks; i++ {
		r.progress.Step("store", i, chunks)
		chunk := days[i*size : min((i+1)*size, len(days))]
		totals, err := r.store.Totals(ctx, r.query, chunk, r.window.Loc)
		first = firstErr(first, err)
		var clicks int64
		for _, day := range chunk {
			r := totals[day]
			local[day] = r
			if r.Err != nil {
				msg := r.Err.Error()
				key := strings.ReplaceAll(msg, day.String(), "")
				if _, seen := failed[key]; !seen {
					causes = append(causes, key)
					shown[key] = msg
				}
				failed[key] = append(failed[key], day)
				continue
			}
			clicks += r.Clicks
		}
		if chunks > 1 {
			r.log.Info("store days counted", "from", chunk[0].String(), "to", chunk[len(chunk)-1].String(),
				"chunk", i+1, "of", chunks, "clicks", clicks)
		}
	}
	r.progress.Step("store", chunks, chunks)
	for _, key := range causes {
		hit := failed[key]
		r.log.Error("store read failed", "days", len(hit), "from", hit[0].String(), "to", hit[len(hit)-1].String(), "err", shown[key])
	}
	r.log.Info("store read", "days", len(local), "duration_ms", time.Since(started).Milliseconds())
	return local, first
}

// unopened is what the store says of each day of w when it could not be
// opened (err): nothing, for that reason.
func unopened(w reconcile.Window, err error) map[reconcile.Date]reconcile.Reading {
	local := map[reconcile.Date]reconcile.Reading{}
	for _, day := range w.Days() {
		local[day] = reconcile.Unknown(err)
	}
	return local
}

// findingZoneAssumed is the finding that says in which zone the store's
// times without an offset were read: an assumption clickrecon cannot
// check, said whether or not the days were drilled into.
const findingZoneAssumed = "zone_assumed"

// assumedZone says, in the log and as a report finding, that the store
// holds times without an offset and in which zone they were read
// (store.Naive); nothing when its times are instants. A failure to tell is
// logged and returned: the counts do not depend on it, a repair does.
func assumedZone(ctx context.Context, log *slog.Logger, st *store.Store, q store.Query, w reconcile.Window) (store.Naive, []report.Finding, error) {
	n, err := st.Naive(ctx, q, w)
	if err != nil {
		log.Warn("could not tell whether the store's times carry an offset", "err", err)
		return store.Naive{}, nil, err
	}
	if !n.Assumed() {
		return n, nil, nil
	}
	log.Info("store times without an offset read in a zone", "column", n.Column, "zone", n.Zone.String(), "note", n.Note())
	return n, []report.Finding{{Kind: findingZoneAssumed, Message: n.Note()}}, nil
}

// assumed says, in the log and as report findings, what the store's
// counts rest on that clickrecon cannot check (store.Assumptions: rows a
// row-level security policy hides from STORE_DSN's role, the zone a custom
// query runs in). A failure to tell is logged: the counts do not depend
// on it.
func assumed(ctx context.Context, log *slog.Logger, st *store.Store, q store.Query, loc *time.Location) []report.Finding {
	as, err := st.Assumptions(ctx, q, loc)
	if err != nil {
		log.Warn("could not tell what the store's counts rest on", "err", err)
		return nil
	}
	var out []report.Finding
	for _, a := range as {
		log.Warn("store counts rest on an assumption", "kind", a.Kind, "note", a.Message)
		out = append(out, report.Finding{Kind: a.Kind, Message: a.Message})
	}
	return out
}
