package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
)

// BenchmarkPostgresTotals measures the main pass on PostgreSQL, on the
// reference schemas: events with 300,000 clicks over 30 days (10,000 a
// day, 1,000 links), daily with 1,000 links over 365 days (365,000
// counters). Three ways to read a window:
//
//	per_link  Counts for every day, as the main pass did before Totals
//	totals    Totals: one statement per day, in one transaction (events);
//	          one GROUP BY day over the days' range (daily)
//	chunk     the days' totals in one statement (unnest of their bounds),
//	          kept here only to measure it: it was slower wherever days
//	          have clicks, as each day's count is planned generically
//
// Run with
//
//	PGTEST_DSN=... go test -run '^$' -bench PostgresTotals -benchtime 5x -count 10 ./sources/store/
//
// On localhost a round trip costs far less than it does across a network.
func BenchmarkPostgresTotals(b *testing.B) {
	db, dsn := pgtest.New(b)
	applySchemas(b, db, "postgres")
	db.MustExec(`INSERT INTO clicks (ts, link_id)
		SELECT timestamptz '2026-10-01 00:00:00+00' + n * interval '8640 milliseconds', 'l' || (n % 1000)
		FROM generate_series(0, 300000 - 1) AS n`)
	db.MustExec(`INSERT INTO click_counts (day, link_id, clicks)
		SELECT date '2025-11-01' + d, 'l' || l, d + l
		FROM generate_series(0, 364) AS d, generate_series(0, 999) AS l`)
	db.MustExec(`VACUUM ANALYZE clicks`)
	db.MustExec(`VACUUM ANALYZE click_counts`)
	s, err := Open(b.Context(), storeDSN(b, dsn), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	utc := mustZone(b, "UTC")
	window := func(first string, n int) []reconcile.Date {
		d := mustDate(b, first)
		days := make([]reconcile.Date, n)
		for i := range days {
			days[i] = d.AddDays(i)
		}
		return days
	}
	cases := []struct {
		name   string
		preset string
		days   []reconcile.Date
	}{
		{"events_7_days", PresetEvents, window("2026-10-10", 7)},
		{"events_30_days", PresetEvents, window("2026-10-01", 30)},
		{"daily_31_days", PresetDaily, window("2026-10-01", 31)},
		{"daily_365_days", PresetDaily, window("2025-11-01", 365)},
		// Mostly days without clicks: what a statement costs beyond its count.
		{"events_365_days_sparse", PresetEvents, window("2026-01-01", 365)},
	}
	for _, c := range cases {
		q, err := PresetQuery(c.preset)
		if err != nil {
			b.Fatal(err)
		}
		chunk := chunkSQL(b, c.preset)
		for _, way := range []struct {
			name string
			read func(ctx context.Context) error
		}{
			{"per_link", func(ctx context.Context) error {
				for _, d := range c.days {
					if _, err := s.Counts(ctx, q, d, utc); err != nil {
						return err
					}
				}
				return nil
			}},
			{"totals", func(ctx context.Context) error {
				_, err := s.Totals(ctx, q, c.days, utc)
				return err
			}},
			{"chunk", func(ctx context.Context) error { return chunkTotals(ctx, s, chunk, c.preset, c.days, utc) }},
		} {
			b.Run(c.name+"/"+way.name, func(b *testing.B) {
				for b.Loop() {
					if err := way.read(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// chunkSQL reads the one-statement query of a preset from testdata.
func chunkSQL(b *testing.B, preset string) string {
	text, err := os.ReadFile(filepath.Join("testdata", "chunk_"+preset+"_postgres.sql"))
	if err != nil {
		b.Fatal(err)
	}
	return string(text)
}

// chunkTotals reads the totals of days in one statement.
func chunkTotals(ctx context.Context, s *Store, text, preset string, days []reconcile.Date, loc *time.Location) error {
	var args []any
	if preset == PresetDaily {
		ds := make([]string, len(days))
		for i, d := range days {
			ds[i] = d.String()
		}
		args = []any{pq.StringArray(ds)}
	} else {
		froms, tos := make([]string, len(days)), make([]string, len(days))
		for i, d := range days {
			from, to := d.Bounds(loc)
			froms[i], tos[i] = from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano)
		}
		args = []any{pq.StringArray(froms), pq.StringArray(tos)}
	}
	return s.readOnly(ctx, func(tx *sqlx.Tx) error {
		rows, err := tx.QueryContext(ctx, text, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var i int
			var v any
			if err := rows.Scan(&i, &v); err != nil {
				return err
			}
			if _, err := clickCount(v); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}
