package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// Drill-down modes, as the report names them.
const (
	drillOff       = "off"         // --drilldown off
	drillNone      = "none_needed" // no settled day differs: no request made
	drillBreakdown = "breakdown"   // Elido's /breakdown/link
	drillFallback  = "fallback"    // /breakdown/link answered 404: /timeseries?link_id= per link
)

// lookbackDays is how far before the window the fallback looks for links
// the store knows: a link that stopped getting clicks in the store may be
// exactly the one that lost them.
const lookbackDays = 7

// fallbackConcurrency bounds the per-link requests in flight; the rate
// limiter still paces them.
const fallbackConcurrency = 4

// budget counts the drill-down's API requests against
// RECON_DRILLDOWN_MAX_REQUESTS. It is checked before each call; a call that
// pages or retries can take the count a little past the limit.
type budget struct {
	client *elido.Client
	max    int
	start  int

	mu       sync.Mutex
	reserved int
}

func newBudget(c *elido.Client, max int) *budget {
	return &budget{client: c, max: max, start: totalRequests(c)}
}

// take reserves one call, or reports that the budget is spent.
func (b *budget) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if max(b.reserved, b.used()) >= b.max {
		return false
	}
	b.reserved++
	return true
}

func (b *budget) used() int { return totalRequests(b.client) - b.start }

func totalRequests(c *elido.Client) int {
	n := 0
	for _, v := range c.Requests() {
		n += v
	}
	return n
}

// drill reads, for each settled day that differs, Elido's per-link,
// per-country and hourly counts and the store's, within the request
// budget. localLinks holds the store's per-link counts of the days that
// differ, seenLinks its clicks per link over the whole window, both
// already read.
func (j job) drill(ctx context.Context, log *slog.Logger, res reconcile.Result, localLinks map[reconcile.Date]map[string]int64, seenLinks map[string]int64) (map[reconcile.Date]reconcile.DayDetail, report.Drilldown) {
	var days []reconcile.Date
	for _, d := range res.Gaps() {
		days = append(days, d.Date)
	}
	summary := report.Drilldown{Mode: drillNone}
	if len(days) == 0 {
		return nil, summary
	}
	started := time.Now()
	b := newBudget(j.client, j.drillMax)
	tz := j.window.Loc.String()
	details := map[reconcile.Date]*reconcile.DayDetail{}
	summary.Mode = drillBreakdown
	for i, d := range days {
		j.bar.Step("drill-down", i, len(days))
		det := &reconcile.DayDetail{LocalLinks: localLinks[d]}
		details[d] = det
		if summary.Mode == drillBreakdown {
			if !b.take() {
				det.Notes = append(det.Notes, "per-link counts not read: RECON_DRILLDOWN_MAX_REQUESTS ran out")
			} else {
				links, err := j.client.LinkBreakdown(ctx, d, d, tz)
				switch {
				case errors.Is(err, elido.ErrNotFound):
					log.Info("elido has no /breakdown/link; checking links one by one", "err", err)
					summary.Mode = drillFallback
				case err != nil:
					det.Notes = append(det.Notes, "Elido's per-link counts could not be read: "+err.Error())
				default:
					det.APILinks, det.LinksComplete = map[string]int64{}, true
					for _, l := range links {
						det.APILinks[l.LinkID] += l.Clicks
					}
				}
			}
		}
		j.drillCountries(ctx, b, d, tz, det)
		j.drillHours(ctx, b, d, tz, det)
	}
	if summary.Mode == drillFallback {
		summary.UncheckedLinks = j.drillLinksOneByOne(ctx, log, b, days, details, seenLinks)
	}
	j.drillNeighbourHours(ctx, b, res, details)
	out := map[reconcile.Date]reconcile.DayDetail{}
	for d, det := range details {
		out[d] = *det
	}
	summary.Requests = b.used()
	log.Info("drill-down done", "mode", summary.Mode, "days", len(days), "requests", summary.Requests,
		"unchecked_links", summary.UncheckedLinks, "duration_ms", time.Since(started).Milliseconds())
	return out, summary
}

func (j job) drillCountries(ctx context.Context, b *budget, d reconcile.Date, tz string, det *reconcile.DayDetail) {
	if !b.take() {
		det.Notes = append(det.Notes, "per-country counts not read: RECON_DRILLDOWN_MAX_REQUESTS ran out")
		return
	}
	countries, err := j.client.CountryBreakdown(ctx, d, d, tz)
	if err != nil {
		det.Notes = append(det.Notes, "Elido's per-country counts could not be read: "+err.Error())
		return
	}
	det.APICountries = map[string]int64{}
	for _, c := range countries {
		det.APICountries[c.CountryCode] += c.Clicks
	}
	local, err := j.store.CountryCounts(ctx, j.query, d, j.window.Loc)
	switch {
	case errors.Is(err, store.ErrNotSupported):
	case err != nil:
		det.Notes = append(det.Notes, "the store's per-country counts could not be read: "+err.Error())
	default:
		det.LocalCountries = local
	}
}

func (j job) drillHours(ctx context.Context, b *budget, d reconcile.Date, tz string, det *reconcile.DayDetail) {
	if !b.take() {
		det.Notes = append(det.Notes, "hourly counts not read: RECON_DRILLDOWN_MAX_REQUESTS ran out")
		return
	}
	hours, err := j.client.HourlyTimeseries(ctx, d, tz, "")
	if err != nil {
		det.Notes = append(det.Notes, "Elido's hourly counts could not be read: "+err.Error())
		return
	}
	for _, h := range hours {
		det.APIHours = append(det.APIHours, reconcile.HourCount{Start: h.Start, Clicks: h.Clicks})
	}
	local, err := j.store.HourlyCounts(ctx, j.query, d, j.window.Loc)
	switch {
	case errors.Is(err, store.ErrNotSupported):
	case err != nil:
		det.Notes = append(det.Notes, "the store's hourly counts could not be read: "+err.Error())
	default:
		det.LocalHours = []reconcile.HourCount{}
		for _, h := range local {
			det.LocalHours = append(det.LocalHours, reconcile.HourCount{Start: h.Start, Clicks: h.Clicks})
		}
	}
}

// drillNeighbourHours reads Elido's hours of the days around each pair of
// adjacent opposite gaps whose store has no hourly counts, which is what
// estimating a day-boundary offset from Elido's side alone needs
// (reconcile.Explain). Days that have not ended are left out.
func (j job) drillNeighbourHours(ctx context.Context, b *budget, res reconcile.Result, details map[reconcile.Date]*reconcile.DayDetail) {
	today := reconcile.DateOf(j.now().In(j.window.Loc))
	oldest, limited := j.oldestKept()
	for i := 0; i+1 < len(res.Days); i++ {
		a, c := res.Days[i], res.Days[i+1]
		if !a.IsGap() || !c.IsGap() || a.Status == c.Status {
			continue
		}
		if details[a.Date].LocalHours != nil && details[c.Date].LocalHours != nil {
			continue // the store's own hours decide it (reconcile.Explain)
		}
		for _, d := range []reconcile.Date{a.Date.AddDays(-1), c.Date.AddDays(1)} {
			if _, ok := details[d]; ok || !d.Before(today) || (limited && d.Before(oldest)) || !b.take() {
				continue
			}
			hours, err := j.client.HourlyTimeseries(ctx, d, j.window.Loc.String(), "")
			if err != nil {
				continue // the estimate says it lacks hours; the pair is still reported
			}
			det := &reconcile.DayDetail{}
			for _, h := range hours {
				det.APIHours = append(det.APIHours, reconcile.HourCount{Start: h.Start, Clicks: h.Clicks})
			}
			details[d] = det
		}
	}
}

// drillLinksOneByOne is the fallback where Elido has no per-link
// breakdown: one /timeseries?link_id= request per link the store knows
// (in the window or the lookbackDays before it), each covering every day
// that differs, busiest links first, until the budget runs out. It returns
// how many links were left unchecked.
func (j job) drillLinksOneByOne(ctx context.Context, log *slog.Logger, b *budget, days []reconcile.Date,
	details map[reconcile.Date]*reconcile.DayDetail, seenLinks map[string]int64) int {
	seen := maps.Clone(seenLinks)
	for d := j.window.From.AddDays(-lookbackDays); d.Before(j.window.From); d = d.AddDays(1) {
		counts, err := j.store.Counts(ctx, j.query, d, j.window.Loc)
		if err != nil {
			log.Warn("store read for the drill-down failed", "date", d.String(), "err", err)
			continue
		}
		for id, n := range counts.Links {
			seen[id] += n
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
	for _, det := range details {
		det.APILinks, det.LinksComplete = map[string]int64{}, false
	}

	from, to := days[0], days[len(days)-1]
	var mu sync.Mutex
	unchecked, failed := 0, 0
	var firstErr error
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fallbackConcurrency)
	for _, id := range ids {
		if !b.take() {
			mu.Lock()
			unchecked++
			mu.Unlock()
			continue
		}
		g.Go(func() error {
			series, err := j.client.LinkTimeseries(gctx, from, to, j.window.Loc.String(), id)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				if firstErr == nil {
					firstErr = err
				}
				log.Warn("per-link timeseries failed", "link_id", id, "err", err)
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
	for _, det := range details {
		det.UncheckedLinks = unchecked
		if failed > 0 {
			det.Notes = append(det.Notes, fmt.Sprintf("%d of %d links could not be read from Elido and were not checked (first error: %v)", failed, len(ids), firstErr))
		}
	}
	return unchecked + failed
}
