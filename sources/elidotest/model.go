package elidotest

import (
	"sync"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
)

// Model is a workspace's clicks given by their count per link and day,
// on top of the clicks and daily totals: a benchmark's backfill of 30
// days of 100k links is 9 M clicks, which the fake then never holds.
// Link i's clicks of a day fall in its hour i mod 24 (from the day's
// first instant in TZ) and come from country modelCountries[i mod 4].
// Every endpoint asked in TZ counts them: the per-link ones included.
type Model struct {
	TZ    string
	Days  []reconcile.Date // the days the model counts; it has no click on others
	Links []string
	Count func(day reconcile.Date, link int) int64
}

var modelCountries = []string{"PL", "DE", "US", "FR"}

// model is a Model ready to answer: its links' positions, and the day
// totals, computed once.
type model struct {
	Model
	loc    *time.Location
	index  map[string]int
	days   map[reconcile.Date]bool
	mu     sync.Mutex
	totals map[reconcile.Date]int64
}

// SetModel adds m's clicks to what the fake serves, replacing an earlier
// model, and forgets the rankings kept (as SetClicks does).
func (s *Server) SetModel(m Model) error {
	loc, err := time.LoadLocation(m.TZ)
	if err != nil {
		return err
	}
	md := &model{Model: m, loc: loc, index: make(map[string]int, len(m.Links)), days: map[reconcile.Date]bool{},
		totals: map[reconcile.Date]int64{}}
	for i, id := range m.Links {
		md.index[id] = i
	}
	for _, d := range m.Days {
		md.days[d] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model = md
	s.gen++
	s.ranked = nil
	return nil
}

// in returns the model if it applies to the span (asked in its zone).
func (m *model) in(sp span) *model {
	if m == nil || sp.tz != m.TZ {
		return nil
	}
	return m
}

// each calls fn for each modelled day of the span and each of its links
// (the span's link only, if it names one) with clicks.
func (m *model) each(sp span, fn func(day reconcile.Date, link int, n int64)) {
	only, named := -1, sp.linkID != ""
	if named {
		i, ok := m.index[sp.linkID]
		if !ok {
			return
		}
		only = i
	}
	for d := sp.from; !d.After(sp.to); d = d.AddDays(1) {
		if !m.days[d] {
			continue
		}
		if named {
			if n := m.Count(d, only); n != 0 {
				fn(d, only, n)
			}
			continue
		}
		for i := range m.Links {
			if n := m.Count(d, i); n != 0 {
				fn(d, i, n)
			}
		}
	}
}

// dayClicks returns the clicks of each modelled day of the span.
func (m *model) dayClicks(sp span) map[string]int64 {
	out := map[string]int64{}
	if sp.linkID != "" {
		m.each(sp, func(d reconcile.Date, _ int, n int64) { out[d.String()] += n })
		return out
	}
	for d := sp.from; !d.After(sp.to); d = d.AddDays(1) {
		if !m.days[d] {
			continue
		}
		m.mu.Lock()
		total, ok := m.totals[d]
		m.mu.Unlock()
		if !ok {
			m.each(span{from: d, to: d, tz: sp.tz}, func(_ reconcile.Date, _ int, n int64) { total += n })
			m.mu.Lock()
			m.totals[d] = total
			m.mu.Unlock()
		}
		out[d.String()] = total
	}
	return out
}

// hourOf is when link i's clicks of day d fall.
func (m *model) hourOf(d reconcile.Date, i int) time.Time {
	return d.Start(m.loc).Add(time.Duration(i%24) * time.Hour)
}

// visitors counts the span's unique clicks as summary does: a link has
// one country, so each link with clicks is one.
func (m *model) visitors(sp span) int64 {
	seen := make([]bool, len(m.Links))
	var n int64
	m.each(sp, func(_ reconcile.Date, i int, _ int64) {
		if !seen[i] {
			seen[i] = true
			n++
		}
	})
	return n
}
