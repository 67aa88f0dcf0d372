package job

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elido"
	"golang.org/x/sync/errgroup"
)

// lookbackDays is how far before the window the fallback looks for links
// the store knows: a link that stopped getting clicks in the store may be
// exactly the one that lost them.
const lookbackDays = 7

// fallbackConcurrency bounds the per-link requests in flight; the rate
// limiter still paces them.
const fallbackConcurrency = 4

// storeLinks reads the store's per-link counts of day d into det, and
// their sum. A failure is logged and recorded in errs, and leaves the
// day's links unread (nil).
func (dr driller) storeLinks(ctx context.Context, d reconcile.Date, det *reconcile.DayDetail, errs map[reconcile.Date]error) {
	counts, err := dr.store.Counts(ctx, dr.query, d, dr.window.Loc)
	if dr.storeRead(d, err, errs) != nil {
		det.LocalLinks, det.LocalLinkSum = nil, nil
		return
	}
	det.LocalLinks, det.LocalLinkSum = counts.Links, &counts.Total
}

// linksOneByOne is the fallback where Elido has no per-link
// breakdown: one /timeseries?link_id= request per link the store knows
// (on the days that differ or the lookbackDays before each of them), each
// covering every day that differs, busiest links first, until the budget
// runs out. It returns how many links were left unchecked. The list costs
// the store per-link counts of those days only, never of the whole window;
// the days that differ keep theirs whole in details, to compare with what
// Elido says of the links checked. A failure to read one is in storeErrs.
func (dr driller) linksOneByOne(ctx context.Context, b *budget, days []reconcile.Date,
	details map[reconcile.Date]*reconcile.DayDetail, storeErrs map[reconcile.Date]error) int {
	ids := dr.linksToCheck(ctx, days, details, storeErrs)
	for _, det := range details {
		det.APILinks, det.LinksComplete = map[string]int64{}, false
	}
	from, to := spanOf(days)
	unchecked, failed, firstErr := dr.checkLinks(ctx, b, ids, from, to, details)
	for _, det := range details {
		det.UncheckedLinks = unchecked
		if failed > 0 {
			det.Notes = append(det.Notes, fmt.Sprintf("%d of %d links could not be read from Elido and were not checked (first error: %v)", failed, len(ids), firstErr))
		}
	}
	return unchecked + failed
}

// linksToCheck returns the links the store knows on days or the
// lookbackDays before each of them, busiest first, and reads each of days'
// per-link counts into details (storeLinks).
func (dr driller) linksToCheck(ctx context.Context, days []reconcile.Date,
	details map[reconcile.Date]*reconcile.DayDetail, storeErrs map[reconcile.Date]error) []string {
	seen := map[string]int64{}
	read := map[reconcile.Date]bool{}
	started := time.Now()
	for _, d := range days {
		read[d] = true
		dr.storeLinks(ctx, d, details[d], storeErrs)
		for id, n := range details[d].LocalLinks {
			seen[id] += n
		}
	}
	dr.log.Info("store links read", "days", len(days), "duration_ms", time.Since(started).Milliseconds())
	for _, g := range days {
		for d := g.AddDays(-lookbackDays); d.Before(g); d = d.AddDays(1) {
			if read[d] {
				continue
			}
			read[d] = true
			counts, err := dr.store.Counts(ctx, dr.query, d, dr.window.Loc)
			if err != nil {
				dr.log.Warn("store read for the drill-down failed", "date", d.String(), "err", err)
				continue
			}
			for id, n := range counts.Links {
				seen[id] += n
			}
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, c int) bool {
		if seen[ids[a]] != seen[ids[c]] {
			return seen[ids[a]] > seen[ids[c]]
		}
		return ids[a] < ids[c]
	})
	return ids
}

// spanOf returns the first and the last of days, which are worst first,
// not in date order: the series spans them all.
func spanOf(days []reconcile.Date) (from, to reconcile.Date) {
	from, to = days[0], days[0]
	for _, d := range days {
		if d.Before(from) {
			from = d
		}
		if to.Before(d) {
			to = d
		}
	}
	return from, to
}

// checkLinks reads each link's series over from..to, fallbackConcurrency
// at a time, into the APILinks of the days of details, while the budget
// lasts. It returns how many links were left unread (unchecked) and how
// many failed, with the first failure.
func (dr driller) checkLinks(ctx context.Context, b *budget, ids []string, from, to reconcile.Date,
	details map[reconcile.Date]*reconcile.DayDetail) (unchecked, failed int, firstErr error) {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fallbackConcurrency)
	for _, id := range ids {
		if !b.left() {
			mu.Lock()
			unchecked++
			mu.Unlock()
			continue
		}
		g.Go(func() error {
			series, err := dr.client.LinkTimeseries(gctx, from, to, dr.window.Loc, id)
			b.check(err)
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, elido.ErrBudget) || b.err() != nil {
				unchecked++ // never read: nothing is known of it
				return nil
			}
			if err != nil {
				failed++
				if firstErr == nil {
					firstErr = err
				}
				dr.log.Warn("per-link timeseries failed", "link_id", id, "err", err)
				return nil
			}
			for _, dc := range series {
				if det, ok := details[dc.Date]; ok {
					det.APILinks[id] = dc.Clicks
				}
			}
			return nil
		})
	}
	_ = g.Wait() // the goroutines report failures as unchecked links
	return unchecked, failed, firstErr
}
