package job

import (
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/clickrecon/clickrecon/reconcile"
)

// worstFirst orders the days that differ as the budget should be spent on
// them: the most severe first, then the largest gap, then by date.
func worstFirst(gaps []reconcile.DayResult) []reconcile.Date {
	gaps = slices.Clone(gaps)
	rank := func(s reconcile.Severity) int {
		switch s {
		case reconcile.Fail:
			return 2
		case reconcile.Warn:
			return 1
		}
		return 0
	}
	size := func(d reconcile.DayResult) uint64 {
		if d.Delta == nil {
			return 0
		}
		if *d.Delta < 0 {
			return uint64(-(*d.Delta + 1)) + 1 // math.MinInt64 too
		}
		return uint64(*d.Delta)
	}
	sort.SliceStable(gaps, func(i, j int) bool {
		a, c := gaps[i], gaps[j]
		if rank(a.Severity) != rank(c.Severity) {
			return rank(a.Severity) > rank(c.Severity)
		}
		if size(a) != size(c) {
			return size(a) > size(c)
		}
		return a.Date.Before(c.Date)
	})
	days := make([]reconcile.Date, len(gaps))
	for i, d := range gaps {
		days[i] = d.Date
	}
	return days
}

// dayConcurrency is how many days are drilled at once: each holds the
// store's counts of its links (about 3 MB per 100k links) while its pages
// are compared.
const dayConcurrency = 2

// drillMode says whether the days are drilled by Elido's breakdown, until
// a day finds Elido has none (the days are drilled concurrently).
type drillMode struct{ breakdown atomic.Bool }

func (m *drillMode) isBreakdown() bool { return m.breakdown.Load() }

func (m *drillMode) noBreakdown() { m.breakdown.Store(false) }

// worstOf returns the days of some, in the order of worst.
func worstOf(worst, some []reconcile.Date) []reconcile.Date {
	var out []reconcile.Date
	for _, d := range worst {
		if slices.Contains(some, d) {
			out = append(out, d)
		}
	}
	return out
}

// dayLeft is what a day left unread: its links (links; linkCount the
// store's links of the day, -1 when not known) and the requests that would
// read the rest for want of budget or time (rest).
type dayLeft struct {
	links     bool
	linkCount int
	rest      int
}

// dayPlan is what a day will read: its links by its own breakdown
// (breakdown), with the requests it holds.
type dayPlan struct {
	date      reconcile.Date
	k, pages  int
	breakdown bool
	hold      *hold
	left      *dayLeft
	api       *int64 // Elido's count of the day, nil when not known
}

// planDay decides what day d of rc reads: its links by its own breakdown
// (unless the run's proved them), its countries and its hours, and sets
// aside the requests they need (budget.reserve). A breakdown is never
// started that cannot finish.
func (dr driller) planDay(b *budget, rc *runCounts, d reconcile.Date, proved bool, mode *drillMode, det *reconcile.DayDetail) dayPlan {
	p := dayPlan{date: d, k: -1, pages: 1, left: &dayLeft{linkCount: -1}}
	if rc.read {
		p.k = rc.pos(d)
	}
	if p.k >= 0 && rc.err[p.k] == nil {
		p.left.linkCount = rc.links[p.k]
		p.pages = pagesFor(rc.links[p.k])
		det.LocalLinkSum = rc.sum[p.k]
	}
	p.breakdown = !proved && mode.isBreakdown()
	switch {
	case !p.breakdown:
	case p.k >= 0 && rc.err[p.k] != nil:
		// Without the store's side, Elido's would buy nothing.
		p.left.links, p.breakdown = true, false
	default:
		// Its pages and the day's countries and hours must fit.
		h, ok := b.reserve(p.pages + 2)
		if p.k >= 0 && ok {
			p.hold = h
			return p
		}
		h.release()
		det.Notes = append(det.Notes, dr.roomNote(b, p.pages))
		p.left.links, p.left.rest, p.breakdown = true, p.pages, false
	}
	p.hold, _ = b.reserve(min(2, b.room()))
	return p
}

// roomNote says why a day's links were not read: its breakdown would not
// fit in what is left of the budget or of the time.
func (dr driller) roomNote(b *budget, pages int) string {
	if b.err() != nil {
		return budgetNote(b, "per-link counts", nil)
	}
	return fmt.Sprintf("per-link counts not read: the day's breakdown (about %d pages) and its countries and hours do not fit in the %d requests left (RECON_DRILLDOWN_MAX_REQUESTS, and ELIDO_RATE_LIMIT before the deadline); the breakdown is not started rather than cut short",
		pages, b.room())
}
