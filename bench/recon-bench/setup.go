package main

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/bench/internal/benchkit"
)

// setupPostgres creates (or reuses) the schema on -dsn and seeds it; it
// sets the store's DSN, the schema and the rows written, and returns what
// drops the schema, to run whatever happens.
func (w *world) setupPostgres(ctx context.Context, dsnOut, schemaOut *string, rowsOut *int64) (func(), error) {
	o := w.o
	cleanups := []func(){}
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	admin, err := sql.Open("postgres", o.dsn)
	if err != nil {
		return cleanup, err
	}
	cleanups = append(cleanups, func() { admin.Close() })
	schema, reuse := o.schema, o.schema != ""
	if !reuse {
		schema = fmt.Sprintf("recon_bench_%d", os.Getpid())
		if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+pq.QuoteIdentifier(schema)); err != nil {
			return cleanup, fmt.Errorf("create schema %s: %w", schema, err)
		}
		cleanups = append(cleanups, func() {
			if o.keep && ctx.Err() == nil {
				fmt.Printf("kept schema %s: pass -schema %s to reuse it, and drop it when done\n", schema, schema)
				return
			}
			// A fresh context: Ctrl-C must not leave the schema behind.
			if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+pq.QuoteIdentifier(schema)+" CASCADE"); err != nil {
				fmt.Fprintln(os.Stderr, "recon-bench: drop schema:", err)
			}
		})
	}
	dsn, err := benchkit.WithSearchPath(o.dsn, schema)
	if err != nil {
		return cleanup, err
	}
	started := time.Now()
	rows, err := w.seed(ctx, dsn, reuse)
	if err != nil {
		return cleanup, err
	}
	fmt.Printf("seeded %s: %d rows, %d days, %d links in %s (schema %s)\n", o.preset, rows, o.days, o.links,
		time.Since(started).Round(time.Second), schema)
	*dsnOut, *schemaOut, *rowsOut = dsn, schema, rows
	return cleanup, nil
}

// setupMySQL is setupPostgres for -mysql: a database of its own.
func (w *world) setupMySQL(ctx context.Context, dsnOut, schemaOut *string, rowsOut *int64) (func(), error) {
	o := w.o
	admin, err := mysqlOpen(o.mysql, "", false)
	if err != nil {
		return func() {}, err
	}
	database, reuse := o.schema, o.schema != ""
	cleanup := func() { admin.Close() }
	if !reuse {
		database = fmt.Sprintf("recon_bench_%d", os.Getpid())
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+database); err != nil {
			return cleanup, fmt.Errorf("create database %s: %w", database, err)
		}
		cleanup = func() {
			if _, err := admin.ExecContext(context.Background(), "DROP DATABASE "+database); err != nil {
				fmt.Fprintln(os.Stderr, "recon-bench: drop database:", err)
			}
			admin.Close()
		}
	}
	dsn, err := mysqlDatabase(o.mysql, database)
	if err != nil {
		return cleanup, err
	}
	started := time.Now()
	rows, err := w.seedMySQL(ctx, o.mysql, database, reuse)
	if err != nil {
		return cleanup, err
	}
	fmt.Printf("seeded %s on MySQL: %d rows, %d days, %d links in %s (database %s)\n", o.preset, rows, o.days, o.links,
		time.Since(started).Round(time.Second), database)
	*dsnOut, *schemaOut, *rowsOut = dsn, database, rows
	return cleanup, nil
}

// seed creates the reference schema and fills it; the table is analyzed
// and vacuumed so the planner and the visibility map are as a night's
// would be. It returns the rows written.
//
// A reused schema is not filled again; only the lost clicks are taken
// out of it, which a clean run of the same schema then sees too.
func (w *world) seed(ctx context.Context, dsn string, reuse bool) (int64, error) {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	schema, err := os.ReadFile(filepath.Join("sql", "store", "postgres", w.o.preset+".sql"))
	if err != nil {
		return 0, fmt.Errorf("read the reference schema (run from the repository root): %w", err)
	}
	if !reuse {
		if _, err := db.ExecContext(ctx, string(schema)); err != nil {
			return 0, fmt.Errorf("create the reference schema: %w", err)
		}
	}
	type stmt struct {
		text string
		args []any
	}
	var table string
	var stmts []stmt
	switch w.o.preset {
	case "events":
		table = "clicks"
		// The same placement as eventLink, eventTime and countries.
		stmts = append(stmts, stmt{`INSERT INTO clicks (ts, link_id, country_code)
SELECT $1::timestamptz + make_interval(days => d) + make_interval(secs => (i::bigint * 86400000000 / $3) / 1000000.0),
       'lnk_' || lpad(((i::bigint * 7919 + d) % $4)::text, 6, '0'),
       (ARRAY['PL','DE','US','FR'])[1 + i % 4]
FROM generate_series(0, $2 - 1) d, generate_series(0, $3 - 1) i`, []any{w.first, w.o.days, w.o.clicks, w.o.links}})
	case "daily":
		table = "click_counts"
		stmts = append(stmts, stmt{`INSERT INTO click_counts (day, link_id, clicks)
SELECT $1::date + d, 'lnk_' || lpad(n::text, 6, '0'), 1 + n % 5
FROM generate_series(0, $2 - 1) d, generate_series(0, $3 - 1) n`, []any{w.first.Format(time.DateOnly), w.o.days, w.o.links}})
	}
	if reuse {
		stmts = nil
		if w.o.preset == "daily" {
			// Undo an earlier case's losses: every counter back to its seed.
			stmts = append(stmts, stmt{`UPDATE click_counts SET clicks = 1 + substr(link_id, 5)::int % 5 WHERE clicks <> 1 + substr(link_id, 5)::int % 5`, nil})
		}
	}
	every := w.every()
	for _, d := range slices.Sorted(maps.Keys(w.lost)) {
		day := w.first.AddDate(0, 0, d)
		switch w.o.preset {
		case "events": // the lost links lose every click of the day
			stmts = append(stmts, stmt{`DELETE FROM clicks WHERE ts >= $1 AND ts < $2 AND substr(link_id, 5)::int % $3 = $4`,
				[]any{day, day.AddDate(0, 0, 1), every, w.shift[d]}})
		case "daily": // the lost links lose one click of the day
			stmts = append(stmts, stmt{`UPDATE click_counts SET clicks = clicks - 1 WHERE day = $1 AND substr(link_id, 5)::int % $2 = $3`,
				[]any{day.Format(time.DateOnly), every, w.shift[d]}})
		}
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s.text, s.args...); err != nil {
			return 0, fmt.Errorf("seed %s: %w", table, err)
		}
	}
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE "+table); err != nil {
		return 0, fmt.Errorf("vacuum %s: %w", table, err)
	}
	var rows int64
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&rows)
	return rows, err
}
