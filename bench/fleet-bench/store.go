package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/bench/internal/benchkit"
)

// stores creates, on the one server at dsn, a schema per workspace
// holding the reference events table with the clicks its receiver kept,
// and one for the shared history. It returns the history's DSN and what
// drops every schema, to run whatever happens.
func stores(ctx context.Context, dsn, prefix string, ws []*workspace) (string, func(), error) {
	admin, err := sql.Open("postgres", dsn)
	if err != nil {
		return "", func() {}, err
	}
	var created []string
	cleanup := func() {
		// A fresh context: Ctrl-C must not leave the schemas behind.
		for _, s := range created {
			if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+pq.QuoteIdentifier(s)+" CASCADE"); err != nil {
				fmt.Fprintln(os.Stderr, "fleet-bench: drop schema:", err)
			}
		}
		admin.Close()
	}
	ddl, err := os.ReadFile(filepath.Join("sql", "store", "postgres", "events.sql"))
	if err != nil {
		return "", cleanup, fmt.Errorf("read the reference schema (run from the repository root): %w", err)
	}
	create := func(schema string) error {
		if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+pq.QuoteIdentifier(schema)); err != nil {
			return fmt.Errorf("create schema %s: %w", schema, err)
		}
		created = append(created, schema)
		return nil
	}
	history := prefix + "history"
	if err := create(history); err != nil {
		return "", cleanup, err
	}
	for _, w := range ws {
		w.schema = fmt.Sprintf("%sw%03d", prefix, w.index)
		if err := create(w.schema); err != nil {
			return "", cleanup, err
		}
		if err := seed(ctx, admin, w.schema, string(ddl), w); err != nil {
			return "", cleanup, fmt.Errorf("seed %s: %w", w.schema, err)
		}
	}
	historyDSN, err := benchkit.WithSearchPath(dsn, history)
	return historyDSN, cleanup, err
}

// seed creates the reference table in schema and copies in the clicks
// the workspace's store kept, then vacuums and analyzes it as a night's
// table would be.
func seed(ctx context.Context, db *sql.DB, schema, ddl string, w *workspace) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SET LOCAL search_path TO "+pq.QuoteIdentifier(schema)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, "COPY clicks (ts, link_id, country_code) FROM STDIN")
	if err != nil {
		return err
	}
	for _, c := range w.stored {
		var country any
		if c.CountryCode != "" {
			country = c.CountryCode
		}
		if _, err := stmt.ExecContext(ctx, c.TS, c.LinkID, country); err != nil {
			return err
		}
	}
	if _, err := stmt.ExecContext(ctx); err != nil {
		return err
	}
	if err := stmt.Close(); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "VACUUM ANALYZE "+pq.QuoteIdentifier(schema)+".clicks")
	return err
}

// historyRuns returns the runs recorded after the run of id after: how
// many, of how many workspaces, and their days found missing.
func historyRuns(ctx context.Context, historyDSN string, after int64) (runs, workspaces, missing int64, err error) {
	db, err := sql.Open("postgres", historyDSN)
	if err != nil {
		return 0, 0, 0, err
	}
	defer db.Close()
	err = db.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT workspace_id), coalesce(sum(days_missing), 0) FROM runs WHERE id > $1`, after).
		Scan(&runs, &workspaces, &missing)
	return runs, workspaces, missing, err
}

// lastRun returns the id of the newest recorded run, 0 when none.
func lastRun(ctx context.Context, historyDSN string) (int64, error) {
	db, err := sql.Open("postgres", historyDSN)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var id int64
	err = db.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM runs`).Scan(&id)
	return id, err
}
