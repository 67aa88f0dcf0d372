package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/reconcile"
)

// Totals reads the store's total for each of days, calendar days in loc:
// the main pass, which needs no per-link counts. For the events preset a
// day's total is a count(*) over the day's instants (an index search on
// ts), for the daily preset the sum of the day's counters (a search of the
// primary key), for a custom query its total query (Query.WithTotal) or,
// without one, the sum of its rows. The daily preset reads consecutive
// days in one statement (sum(clicks) ... GROUP BY day over the days'
// range): one range of the primary key instead of one search and one round
// trip per day; given a whole year, PostgreSQL reads it as the one
// parallel scan of BENCHMARKS.md's floor (for 31 days it chooses a bitmap
// scan of the key, which costs about what the 31 searches did). The other
// queries read the days in one read-only transaction, one prepared
// statement run once per day. Counting a chunk of days in one PostgreSQL
// statement for events (unnest of the days' bounds) was measured
// (BenchmarkPostgresTotals) and not kept: no faster for 7 or 30 days,
// faster only where days have no clicks and round trips are all the cost.
//
// Every day of days gets a Reading: its clicks, or reconcile.Unknown with
// the reason it could not be read. The error is the first such reason, nil
// when every day was read. When the events table holds rows whose time
// cannot be read (CheckTimes), no day can be checked: every day is Unknown
// with an *UnreadableError. A day whose count is not believable (above
// MaxClicks) is Unknown with an ErrBadQuery; the other days are still read.
//
// Everything runs in read-only transactions, as Counts does.
func (s *Store) Totals(ctx context.Context, q Query, days []reconcile.Date, loc *time.Location) (map[reconcile.Date]reconcile.Reading, error) {
	out := make(map[reconcile.Date]reconcile.Reading, len(days))
	all := func(err error) (map[reconcile.Date]reconcile.Reading, error) {
		for _, d := range days {
			out[d] = reconcile.Unknown(err)
		}
		return out, err
	}
	switch {
	case q.name == "":
		return all(errors.New("count clicks: no query: use PresetQuery or CustomQuery"))
	case loc == nil:
		return all(errors.New("count clicks: no time zone"))
	case len(days) == 0:
		return out, nil
	}
	if err := s.CheckTimes(ctx, q); err != nil {
		return all(err)
	}
	if q.total.chunk != nil && consecutive(days) {
		s.totalsChunk(ctx, q, days, out)
	} else {
		s.totalsEach(ctx, q, days, loc, out)
	}
	var first error
	for _, d := range days {
		if err := out[d].Err; err != nil && first == nil {
			first = err
		}
	}
	return out, first
}

// consecutive reports whether days are one run of calendar days in order,
// the only days a chunk query reads without reading others.
func consecutive(days []reconcile.Date) bool {
	for i, d := range days {
		if d != days[0].AddDays(i) {
			return false
		}
	}
	return true
}

// totalsChunk reads the totals of days, consecutive, with the chunk query
// of q: one statement for them all. A day the statement returns no row for
// has no clicks. A day whose sum is not believable is unknown on its own;
// a statement that fails, or returns a day outside days, leaves every day
// unknown.
//
// The statement runs with JIT compilation on, unless the DSN chose: JIT
// is off for the store's sessions because a statement run once per day
// compiles at every run (pin), but this one runs once, and over a year of
// 100k links' counters (36.5 M rows, a parallel sequential scan) the
// compiled scan took 1.9-2.4 s against 2.5-3.0 s without (BENCHMARKS.md).
func (s *Store) totalsChunk(ctx context.Context, q Query, days []reconcile.Date, out map[reconcile.Date]reconcile.Reading) {
	first, last := days[0], days[len(days)-1]
	got := make(map[reconcile.Date]reconcile.Reading, len(days))
	err := s.readOnly(ctx, func(tx *sqlx.Tx) error {
		if s.jitOff {
			if _, err := tx.ExecContext(ctx, "SET LOCAL jit = on"); err != nil {
				return classify(err)
			}
		}
		return s.query(ctx, tx, q.total.chunk.in(s.dialect), map[string]any{"first": first.String(), "last": last.String()}, func(rows *sql.Rows) error {
			for rows.Next() {
				var day string
				var v any
				if err := rows.Scan(&day, &v); err != nil {
					return err // s.query marks it ErrBadQuery
				}
				d, err := reconcile.ParseDate(day)
				if err != nil || d.Before(first) || d.After(last) {
					return fmt.Errorf("the query returned day %q, not one of %s to %s", day, first, last)
				}
				if _, dup := got[d]; dup {
					return fmt.Errorf("the query returned day %s twice", d)
				}
				n, err := clickCount(v)
				if err != nil {
					got[d] = reconcile.Unknown(fmt.Errorf("count clicks for %s: %s total: %w: %w", d, q.name, ErrBadQuery, err))
					continue
				}
				got[d] = reconcile.Known(n)
			}
			return nil // s.query reads rows.Err
		})
	})
	for _, d := range days {
		switch r, ok := got[d]; {
		case err != nil:
			out[d] = reconcile.Unknown(fmt.Errorf("count clicks for %s: %s total of %s to %s: %w", d, q.name, first, last, err))
		case ok:
			out[d] = r
		default:
			out[d] = reconcile.Known(0)
		}
	}
}

// totalsEach reads the days one statement each, all in one read-only
// transaction with the statement prepared once. A day whose read fails
// ends the transaction (PostgreSQL refuses any further statement in it),
// and the next day starts a new one.
func (s *Store) totalsEach(ctx context.Context, q Query, days []reconcile.Date, loc *time.Location, out map[reconcile.Date]reconcile.Reading) {
	nq, summed, err := s.totalQuery(q)
	if err != nil {
		for _, d := range days {
			out[d] = reconcile.Unknown(fmt.Errorf("count clicks for %s: %s total: %w", d, q.name, err))
		}
		return
	}
	read := readTotal
	if summed {
		read = readSummedLinks
	}
	var z sessionZone
	if q.total.name == nameCustom || summed && q.name == nameCustom {
		if z, err = s.customZone(ctx, loc); err != nil {
			for _, d := range days {
				out[d] = reconcile.Unknown(fmt.Errorf("count clicks for %s: %s total: %w", d, q.name, err))
			}
			return
		}
	}
	for i := 0; i < len(days); {
		err := s.readOnlyIn(ctx, z, func(tx *sqlx.Tx) error {
			var stmt *sql.Stmt
			defer func() {
				if stmt != nil {
					stmt.Close()
				}
			}()
			for ; i < len(days); i++ {
				d := days[i]
				from, to := d.Bounds(loc)
				text, args, err := nq.bind(s.dialect, s.paramsIn(d, from, to, loc, z))
				if err != nil {
					return err
				}
				if stmt == nil {
					if stmt, err = tx.PrepareContext(ctx, text); err != nil {
						return classify(err)
					}
				}
				n, err := s.total(ctx, stmt, args, read)
				if err != nil {
					out[d] = reconcile.Unknown(fmt.Errorf("count clicks for %s: %s total: %w", d, q.name, err))
					i++
					return nil // a new transaction for the next day
				}
				out[d] = reconcile.Known(n)
			}
			return nil
		})
		if err != nil { // no statement could run: nor can the days left
			for ; i < len(days); i++ {
				out[days[i]] = reconcile.Unknown(fmt.Errorf("count clicks for %s: %s total: %w", days[i], q.name, err))
			}
		}
	}
}

// total runs stmt with args and reads its rows with read.
func (s *Store) total(ctx context.Context, stmt *sql.Stmt, args []any, read func(*sql.Rows) (int64, error)) (int64, error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return 0, classify(err)
	}
	defer rows.Close()
	n, err := read(rows)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return 0, err
		}
		return 0, fmt.Errorf("%w: %w", ErrBadQuery, err)
	}
	return n, classify(rows.Err())
}

// readTotal reads the one row, one column of a total query.
func readTotal(rows *sql.Rows) (int64, error) {
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	if len(cols) != 1 {
		return 0, fmt.Errorf("a total query must return one column, clicks; it returned %s", describeColumns(cols))
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return 0, err
		}
		return 0, errors.New("the total query returned no row: it must return exactly one, as count(*) and sum() without GROUP BY do")
	}
	var v any
	if err := rows.Scan(&v); err != nil {
		return 0, err
	}
	n, err := clickCount(v)
	if err != nil {
		return 0, err
	}
	if rows.Next() {
		return 0, errors.New("the total query returned more than one row: it must return the day's total alone")
	}
	return n, nil
}

// readSummedLinks reads the (link_id, clicks) rows of a count query and
// returns their sum: the total of a custom query without a total query.
func readSummedLinks(rows *sql.Rows) (int64, error) {
	dc := DayCounts{Links: map[string]int64{}}
	if err := readLinkCounts(rows, dc.addRow); err != nil {
		return 0, err
	}
	return dc.Total, nil
}
