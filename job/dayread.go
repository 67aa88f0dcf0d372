package job

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// drillDay reads what p planned of its day into det.
func (dr driller) drillDay(ctx context.Context, b *budget, rc *runCounts, p dayPlan, mode *drillMode, det *reconcile.DayDetail) {
	h, l := p.hold, p.left
	defer h.release()
	ctx = elido.WithBudget(ctx, h.take, h.giveBack)
	if p.breakdown {
		g := &pageGuard{h: h, api: p.api}
		switch {
		case dr.links(ctx, b, g, p.date, rc.take(p.k), det):
			mode.noBreakdown()
		case det.LinksComplete:
		case g.need > 0:
			// Stopped: a whole breakdown needs its pages again.
			l.links, l.rest = true, g.pages+g.need
		default:
			l.links = true
			if errors.Is(ctx.Err(), context.DeadlineExceeded) || b.err() == nil && !h.left() {
				l.rest = p.pages
			}
		}
	}
	if dr.countries(ctx, b, h, p.date, det) {
		l.rest++
	}
	if dr.hours(ctx, b, h, p.date, det) {
		l.rest++
	}
}

// errTooLong stops a day's breakdown that Elido's pages show cannot
// finish within what is left.
var errTooLong = errors.New("the day's breakdown needs more pages than are left")

// pageGuard keeps a day's breakdown from being cut short when the store's
// links of the day, which sized it (pagesFor), are fewer than Elido's.
// Elido's pages say nothing of how many follow (only next_cursor), but
// they list the links highest first: after a full page, the clicks of the
// day (Elido's daily count) not yet read are spread over links of at most
// the page's lowest count each, so at least that many links, and pages,
// are still to come. The hold is grown to cover them with the day's
// countries and hours; when it cannot be, the breakdown stops at once
// rather than spend requests on a part that buys nothing.
type pageGuard struct {
	h     *hold
	api   *int64       // Elido's count of the day; nil: no bound
	taken atomic.Int64 // the breakdown's requests taken, the page read ahead included
	read  int64        // clicks of the pages checked
	pages int          // pages checked
	need  int          // when stopped: the pages still to come, at least
}

func (g *pageGuard) take() bool {
	if g.h.take() {
		g.taken.Add(1)
		return true
	}
	return false
}

func (g *pageGuard) giveBack() {
	g.taken.Add(-1)
	g.h.giveBack()
}

// check is called with each page as it is read; it returns errTooLong when
// the rest of the breakdown and the day's countries and hours cannot be
// held.
func (g *pageGuard) check(page []elido.LinkCount) error {
	if g == nil {
		return nil
	}
	g.pages++
	lowest := int64(-1)
	for _, l := range page {
		g.read += l.Clicks // the client checked the sum fits
		if lowest < 0 || l.Clicks < lowest {
			lowest = l.Clicks
		}
	}
	if g.api == nil || len(page) < pageLinks || lowest <= 0 || *g.api <= g.read {
		return nil // the last page, or no bound
	}
	links := (*g.api - g.read + lowest - 1) / lowest
	need := int(min(links, math.MaxInt32)+pageLinks-1) / pageLinks
	ahead := max(int(g.taken.Load())-g.pages, 0) // asked for already
	if g.h.ensure(max(need-ahead, 0) + 2) {
		return nil
	}
	g.need = need
	return errTooLong
}

// tooLongNote says why a day's breakdown was stopped (pageGuard).
func (dr driller) tooLongNote(b *budget, g *pageGuard) string {
	if b.err() != nil {
		return budgetNote(b, "per-link counts", nil)
	}
	return fmt.Sprintf("per-link counts not read: Elido has more links on the day than the store (its first %d pages of 1000 and its count of the day leave at least %d more pages), and they do not fit with the day's countries and hours in the %d requests left (RECON_DRILLDOWN_MAX_REQUESTS, and ELIDO_RATE_LIMIT before the deadline); the breakdown is stopped rather than cut short",
		g.pages, g.need, b.room())
}

// links reads Elido's per-link breakdown of day d a page at a time into
// tally, which holds the store's per-link counts of the day, and keeps in
// det the links whose counts differ, or notes why it could not. It
// reports whether Elido has no breakdown, for the fallback.
//
// g, when not nil, holds the day's requests and stops the breakdown as
// soon as Elido's own pages show that it cannot finish (pageGuard).
func (dr driller) links(ctx context.Context, b *budget, g *pageGuard, d reconcile.Date, tally *reconcile.LinkTally, det *reconcile.DayDetail) (noBreakdown bool) {
	if g != nil {
		ctx = elido.WithBudget(ctx, g.take, g.giveBack)
	}
	err := dr.client.LinkBreakdownPages(ctx, d, d, dr.window.Loc, func(page []elido.LinkCount) error {
		if err := elido.TallyPage(tally, page); err != nil {
			return err
		}
		return g.check(page)
	})
	b.check(err)
	switch {
	case errors.Is(err, errTooLong):
		det.Notes = append(det.Notes, dr.tooLongNote(b, g))
	case errors.Is(err, elido.ErrBudget):
		det.Notes = append(det.Notes, budgetNote(b, "per-link counts", err))
	case errors.Is(err, elido.ErrNotFound):
		dr.log.Info("elido has no /breakdown/link; checking links one by one", "err", err)
		return true
	case err != nil:
		det.Notes = append(det.Notes, "Elido's per-link counts could not be read: "+err.Error())
	default:
		det.APILinks, det.LocalLinks = tally.Differing()
		det.LinksComplete = true
		det.APILinkSum, _ = tally.Sums()
	}
	return false
}

// countries reads Elido's and the store's per-country counts of day d
// into det, or notes why it could not. It reports whether they were left
// for want of budget or time.
func (dr driller) countries(ctx context.Context, b *budget, h *hold, d reconcile.Date, det *reconcile.DayDetail) (left bool) {
	if !h.left() {
		det.Notes = append(det.Notes, budgetNote(b, "per-country counts", nil))
		return b.err() == nil
	}
	countries, err := dr.client.CountryBreakdown(ctx, d, d, dr.window.Loc)
	b.check(err)
	if errors.Is(err, elido.ErrBudget) {
		det.Notes = append(det.Notes, budgetNote(b, "per-country counts", err))
		return b.err() == nil
	}
	if err != nil {
		det.Notes = append(det.Notes, "Elido's per-country counts could not be read: "+err.Error())
		return errors.Is(ctx.Err(), context.DeadlineExceeded)
	}
	det.APICountries = map[string]int64{}
	for _, c := range countries {
		det.APICountries[c.CountryCode] += c.Clicks
	}
	local, err := dr.store.CountryCounts(ctx, dr.query, d, dr.window.Loc)
	switch {
	case errors.Is(err, store.ErrNotSupported):
	case err != nil:
		det.Notes = append(det.Notes, "the store's per-country counts could not be read: "+err.Error())
	default:
		det.LocalCountries = local
	}
	return false
}

// hours reads Elido's and the store's hourly counts of day d into det, or
// notes why it could not. It reports whether they were left for want of
// budget or time.
func (dr driller) hours(ctx context.Context, b *budget, h *hold, d reconcile.Date, det *reconcile.DayDetail) (left bool) {
	if !h.left() {
		det.Notes = append(det.Notes, budgetNote(b, "hourly counts", nil))
		return b.err() == nil
	}
	hours, err := dr.client.HourlyTimeseries(ctx, d, dr.window.Loc, "")
	b.check(err)
	if errors.Is(err, elido.ErrBudget) {
		det.Notes = append(det.Notes, budgetNote(b, "hourly counts", err))
		return b.err() == nil
	}
	if err != nil {
		det.Notes = append(det.Notes, "Elido's hourly counts could not be read: "+err.Error())
		return errors.Is(ctx.Err(), context.DeadlineExceeded)
	}
	if len(hours) > 0 {
		det.APIHours = store.MergeShared(hours, dr.wall)
	}
	local, err := dr.store.HourlyCounts(ctx, dr.query, d, dr.window.Loc)
	switch {
	case errors.Is(err, store.ErrNotSupported):
	case err != nil:
		det.Notes = append(det.Notes, "the store's hourly counts could not be read: "+err.Error())
	default:
		det.LocalHours = store.MergeShared(append([]reconcile.HourCount{}, local...), dr.wall) // read, so never nil
	}
	return false
}
