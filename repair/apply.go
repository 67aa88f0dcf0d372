package repair

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/store"
)

// Writer inserts a day's clicks in one transaction, other writers kept
// out, after checking that the hours still hold what the plan saw
// (*store.Writer).
type Writer interface {
	Insert(ctx context.Context, checks []store.HourCheck, hours []store.HourWrite, inserted func(n int)) (store.Written, error)
}

// Journal records a day's repair as intended before it is written, and
// how it ended after: a crash between the two leaves a record that says
// the day was being written, and the day itself either whole or untouched
// (one transaction).
type Journal interface {
	Intend(day reconcile.Date, clicks []Click) error
	Done(r DayResult) error
}

// DayResult is how applying one day's plan ended.
type DayResult struct {
	Day     reconcile.Date
	Planned int // clicks the plan puts back
	// Sent is the clicks inserted (one INSERT each) and committed;
	// Inserted is what the store kept of them, counted again in the day's
	// transaction: fewer where a trigger, a rule or INSERT IGNORE on the
	// store's side dropped or moved rows.
	Sent, Inserted int
	Err            error // why nothing was written, if nothing was
	// Rejected are the hours whose clicks the store would not take (the
	// rest of the day was written).
	Rejected []Rejected
	// After is the store's count for the day once repaired, against
	// Elido's API; Recounted is false when it could not be read.
	API, After int64
	Recounted  bool
}

// Rejected is an hour the store would not take a click of: none of its
// clicks was written.
type Rejected struct {
	From, To time.Time
	Clicks   int // the clicks the hour was to get back
	Err      error
}

// Matches reports whether the store holds, after the repair, as many
// clicks for the day as Elido.
func (r DayResult) Matches() bool { return r.Recounted && r.After == r.API }

// ErrInterrupted marks a day left untouched because the repair was
// stopped before it (SIGTERM, the deadline).
var ErrInterrupted = errors.New("interrupted before this day was written; it is untouched")

// Apply writes each day's plan in a transaction of its own, re-checking in
// it the hours the plan compared, then re-counts the day. A day whose
// transaction fails is left untouched and the next is tried; once ctx
// ends, the days left are not begun. inserted, if not nil, is called after
// each row (uncommitted) with the day and the rows so far.
func Apply(ctx context.Context, w Writer, st Store, o Options, plans []DayPlan, j Journal, inserted func(day reconcile.Date, n int)) []DayResult {
	var out []DayResult
	for _, p := range plans {
		add := p.Add()
		if p.Skipped != "" || len(add) == 0 {
			continue
		}
		r := DayResult{Day: p.Day, Planned: len(add), API: p.API}
		if ctx.Err() != nil {
			r.Err = ErrInterrupted
			out = append(out, r)
			continue
		}
		r.Sent, r.Inserted, r.Rejected, r.Err = applyDay(ctx, w, p, add, j, inserted)
		if r.Err == nil {
			r.After, r.Recounted = recount(ctx, st, o, p.Day)
		}
		if j != nil {
			if err := j.Done(r); err != nil && r.Err == nil {
				r.Err = fmt.Errorf("day committed, but its record could not be completed: %w", err)
			}
		}
		out = append(out, r)
	}
	return out
}

func applyDay(ctx context.Context, w Writer, p DayPlan, add []Click, j Journal, inserted func(reconcile.Date, int)) (sent, kept int, _ []Rejected, _ error) {
	if j != nil {
		if err := j.Intend(p.Day, add); err != nil {
			return 0, 0, nil, fmt.Errorf("record the intended repair of %s (nothing written): %w", p.Day, err)
		}
	}
	var checks []store.HourCheck
	var hours []store.HourWrite
	for _, h := range p.Hours {
		if h.Refused != "" {
			continue
		}
		checks = append(checks, store.HourCheck{From: h.From, To: h.To, Clicks: h.Store})
		if len(h.Add) > 0 {
			clicks := make([]store.Click, len(h.Add))
			for i, c := range h.Add {
				clicks[i] = c.toStore()
			}
			hours = append(hours, store.HourWrite{From: h.From, To: h.To, Clicks: clicks})
		}
	}
	var progress func(int)
	if inserted != nil {
		progress = func(n int) { inserted(p.Day, n) }
	}
	got, err := w.Insert(ctx, checks, hours, progress)
	if err != nil {
		if ctx.Err() != nil {
			return 0, 0, nil, fmt.Errorf("repair of %s stopped, rolled back, nothing written: %w", p.Day, ctx.Err())
		}
		return 0, 0, nil, fmt.Errorf("repair of %s: %w", p.Day, err)
	}
	var rejected []Rejected
	for i, err := range got.Refused {
		if err != nil {
			rejected = append(rejected, Rejected{From: hours[i].From, To: hours[i].To, Clicks: len(hours[i].Clicks), Err: err})
		}
	}
	return got.Sent, got.Inserted, rejected, nil
}

// recount reads the day's count from the store once repaired.
func recount(ctx context.Context, st Store, o Options, day reconcile.Date) (int64, bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute) // a committed day is reported even when interrupted
	defer cancel()
	hours, err := st.HourlyCounts(ctx, o.Query, day, o.Window.Loc)
	if err != nil {
		return 0, false
	}
	var n int64
	for _, h := range hours {
		n += h.Clicks
	}
	return n, true
}
