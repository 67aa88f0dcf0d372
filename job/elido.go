package job

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elido"
)

// elidoChunkDays bounds the days fetched in one /timeseries and /summary
// pair: a long backfill is read in pieces, so a disagreement between the
// two, or a failed request, costs only its own piece.
const elidoChunkDays = 31

// oldestKept is the oldest day Elido can still be asked for, under
// ELIDO_RETENTION_DAYS: today less the retention, plus one day of margin,
// since Elido may purge by the hour or count its days in another zone.
func oldestKept(now time.Time, loc *time.Location, retention int) (reconcile.Date, bool) {
	if retention <= 0 {
		return reconcile.Date{}, false
	}
	return reconcile.DateOf(now.In(loc)).AddDays(-retention + 1), true
}

// elidoRead is what readElido needs.
type elidoRead struct {
	client    *elido.Client
	window    reconcile.Window
	retention int       // ELIDO_RETENTION_DAYS; 0: no limit
	now       time.Time // what "today" is, for the retention
	log       *slog.Logger
	progress  Progress
}

// readElido reads Elido's daily buckets and the matching /summary totals,
// a chunk at a time. A chunk that cannot be read leaves its days unknown;
// the first such error is returned for the exit code.
func readElido(ctx context.Context, r elidoRead) (map[reconcile.Date]reconcile.Reading, []reconcile.SummaryCheck, error) {
	api := map[reconcile.Date]reconcile.Reading{}
	var summaries []reconcile.SummaryCheck
	var first error
	started := time.Now()
	w := r.window
	from := w.From
	if oldest, ok := oldestKept(r.now, w.Loc, r.retention); ok {
		// Elido keeps a plan's worth of days; older ones it cannot count,
		// whatever it answers for them.
		for day := from; day.Before(oldest) && !day.After(w.To); day = day.AddDays(1) {
			api[day] = reconcile.Unknown(fmt.Errorf("the day is older than Elido keeps analytics (ELIDO_RETENTION_DAYS=%d): it cannot be reconciled", r.retention))
			from = day.AddDays(1)
		}
	}
	chunks := (reconcile.Window{From: from, To: w.To}.Len() + elidoChunkDays - 1) / elidoChunkDays
	for i := 0; !from.After(w.To); from, i = from.AddDays(elidoChunkDays), i+1 {
		r.progress.Step("elido", i, chunks)
		to := from.AddDays(elidoChunkDays - 1)
		if to.After(w.To) {
			to = w.To
		}
		days, checks, err := readElidoChunk(ctx, r.log, r.client, from, to, w.Loc)
		if err != nil {
			first = firstErr(first, err)
			r.log.Error("elido read failed", "from", from.String(), "to", to.String(), "err", err)
			for day := from; !day.After(to); day = day.AddDays(1) {
				api[day] = reconcile.Unknown(err)
			}
			continue
		}
		for _, dc := range days {
			api[dc.Date] = reconcile.Known(dc.Clicks)
		}
		summaries = append(summaries, checks...)
	}
	r.log.Info("elido read", "days", len(api), "requests", r.client.Requests(), "duration_ms", time.Since(started).Milliseconds())
	return api, summaries, first
}

// readElidoChunk reads one chunk's /timeseries and /summary. When they
// disagree it reads both once more: a click that landed between the two
// requests is not an inconsistency. When they still disagree it asks
// /summary for each day, so that only the days whose own summary
// disagrees with their bucket are left unverifiable, not the whole chunk.
// A disagreement that persists is left for Compare to report.
func readElidoChunk(ctx context.Context, log *slog.Logger, c *elido.Client, from, to reconcile.Date, loc *time.Location) ([]elido.DayCount, []reconcile.SummaryCheck, error) {
	var days []elido.DayCount
	var sum elido.Summary
	var total int64
	for attempt := 0; attempt < 2; attempt++ {
		var err error
		days, err = c.Timeseries(ctx, from, to, loc)
		if err != nil {
			return nil, nil, err
		}
		sum, err = c.Summary(ctx, from, to, loc)
		if err != nil {
			return nil, nil, err
		}
		total = 0
		for _, d := range days {
			total += d.Clicks
		}
		if total == sum.Clicks {
			return days, []reconcile.SummaryCheck{{From: from, To: to, Clicks: sum.Clicks}}, nil
		}
	}
	whole := []reconcile.SummaryCheck{{From: from, To: to, Clicks: sum.Clicks}}
	if from == to {
		return days, whole, nil
	}
	log.Warn("elido /summary disagrees with /timeseries; checking each day", "from", from.String(), "to", to.String(),
		"summary", sum.Clicks, "timeseries", total)
	var perDay []reconcile.SummaryCheck
	for d := from; !d.After(to); d = d.AddDays(1) {
		s, err := c.Summary(ctx, d, d, loc)
		if err != nil {
			log.Warn("elido /summary for one day failed; the whole range stays unverifiable", "date", d.String(), "err", err)
			return days, whole, nil
		}
		perDay = append(perDay, reconcile.SummaryCheck{From: d, To: d, Clicks: s.Clicks})
	}
	return days, perDay, nil
}
