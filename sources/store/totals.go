package store

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
)

var (
	//go:embed queries/totals_events_postgres.sql
	totalsEventsPostgres string
	//go:embed queries/totals_daily_postgres.sql
	totalsDailyPostgres string
)

// Totals reads the store's total for each of days, calendar days in loc:
// the main pass, which needs no per-link counts. For the events preset a
// day's total is a count(*) over the day's instants (an index search on
// ts), for the daily preset the sum of the day's counters (a search of the
// primary key), for a custom query its total query (Query.WithTotal) or,
// without one, the sum of its rows. On PostgreSQL the presets count a chunk
// of days in one statement.
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
	if s.dialect == dsn.Postgres && q.total.name != "" && q.total.name != nameCustom && chunkDays > 1 {
		s.totalsChunked(ctx, q, days, loc, out)
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

// chunkDays is how many days one statement counts on PostgreSQL.
const chunkDays = 100

// totalsEach reads the days one statement each, all in one read-only
// transaction with the statement prepared once. A day whose read fails
// ends the transaction (PostgreSQL refuses any further statement in it),
// and the next day starts a new one.
func (s *Store) totalsEach(ctx context.Context, q Query, days []reconcile.Date, loc *time.Location, out map[reconcile.Date]reconcile.Reading) {
	nq, read := q.total.in(s.dialect), readTotal
	if q.total.name == "" {
		nq, read = q.in(s.dialect), readSummedLinks
	}
	for i := 0; i < len(days); {
		err := s.readOnly(ctx, func(tx *sqlx.Tx) error {
			var stmt *sql.Stmt
			defer func() {
				if stmt != nil {
					stmt.Close()
				}
			}()
			for ; i < len(days); i++ {
				d := days[i]
				from, to := d.Bounds(loc)
				text, args, err := nq.bind(s.dialect, s.params(d, from, to, loc))
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
		return 0, errors.New("the total query returned no row: it must return one, such as SELECT count(*) AS clicks ...")
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
	if err := readLinkCounts(rows, &dc); err != nil {
		return 0, err
	}
	return dc.Total, nil
}

// totalsChunked reads the presets' totals on PostgreSQL, chunkDays days a
// statement, each chunk in its own read-only transaction. A chunk that
// fails makes each of its days Unknown.
func (s *Store) totalsChunked(ctx context.Context, q Query, days []reconcile.Date, loc *time.Location, out map[reconcile.Date]reconcile.Reading) {
	text := totalsEventsPostgres
	if q.total.name == PresetDaily {
		text = totalsDailyPostgres
	}
	for start := 0; start < len(days); start += chunkDays {
		chunk := days[start:min(start+chunkDays, len(days))]
		var args []any
		if q.total.name == PresetDaily {
			ds := make([]string, len(chunk))
			for i, d := range chunk {
				ds[i] = d.String()
			}
			args = []any{pq.StringArray(ds)}
		} else {
			froms, tos := make([]string, len(chunk)), make([]string, len(chunk))
			for i, d := range chunk {
				from, to := d.Bounds(loc)
				froms[i], tos[i] = from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano)
			}
			args = []any{pq.StringArray(froms), pq.StringArray(tos)}
		}
		got := make([]reconcile.Reading, len(chunk))
		seen := make([]bool, len(chunk))
		err := s.readOnly(ctx, func(tx *sqlx.Tx) error {
			rows, err := tx.QueryContext(ctx, text, args...)
			if err != nil {
				return classify(err)
			}
			defer rows.Close()
			for rows.Next() {
				var i int
				var v any
				if err := rows.Scan(&i, &v); err != nil {
					return err
				}
				if i < 1 || i > len(chunk) {
					return fmt.Errorf("day number %d out of the chunk", i)
				}
				got[i-1], seen[i-1] = reconcile.Known(0), true
				if n, err := clickCount(v); err != nil {
					got[i-1].Err = fmt.Errorf("count clicks for %s: %s total: %w: %w", chunk[i-1], q.name, ErrBadQuery, err)
				} else {
					got[i-1].Clicks = n
				}
			}
			return classify(rows.Err())
		})
		for i, d := range chunk {
			switch {
			case err != nil:
				out[d] = reconcile.Unknown(fmt.Errorf("count clicks for %s: %s total: %w", d, q.name, err))
			case !seen[i]:
				out[d] = reconcile.Unknown(fmt.Errorf("count clicks for %s: %s total: no row for the day", d, q.name))
			default:
				out[d] = got[i]
			}
		}
	}
}
