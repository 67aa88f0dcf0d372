package store

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

var (
	//go:embed queries/insert_click_postgres.sql
	insertClickPostgres string
	//go:embed queries/insert_click_sqlite.sql
	insertClickSQLite string
)

// Writer puts lost clicks back into a click store, through a role of its
// own (STORE_WRITE_DSN): the Store that counts stays read-only. It only
// ever inserts: nothing it runs updates or deletes a row.
type Writer struct {
	db      *sqlx.DB
	dialect dsn.Dialect
	insert  namedQuery
	span    namedQuery
}

// insertParams are the named parameters of an insert statement.
const useInsertNamed = "an insert statement may use the named parameters :ts, :link_id and :country_code"

func allowedInsertParam(name string) bool {
	switch name {
	case "ts", "link_id", "country_code":
		return true
	}
	return false
}

// OpenWriter connects to the store at rawDSN for writing (a SQLite file
// must exist). insertSQL is the statement that inserts one click, with the
// named parameters :ts (an instant: timestamptz on PostgreSQL, RFC 3339 UTC
// text with milliseconds on SQLite), :link_id and :country_code (NULL where
// Elido does not know it); "" is the events schema's own insert. Its
// errors never contain the DSN's password.
func OpenWriter(ctx context.Context, rawDSN, insertSQL string) (*Writer, error) {
	return OpenWriterWith(ctx, rawDSN, insertSQL, Options{})
}

// OpenWriterWith is OpenWriter with options: a click's :ts goes into a
// timestamp (without time zone) column as its wall-clock time in
// o.TimestampZone, the zone the store reads that column in.
func OpenWriterWith(ctx context.Context, rawDSN, insertSQL string, o Options) (*Writer, error) {
	t, err := dsn.Parse(rawDSN, dsn.Options{Name: "STORE_WRITE_DSN", Mode: dsn.ReadWrite, MissingHint: "repair writes into an existing store"})
	if err != nil {
		return nil, fmt.Errorf("open store for writing: %w", configError{err})
	}
	if t, err = o.pin(t); err != nil {
		return nil, fmt.Errorf("open store for writing %s: %w", RedactDSN(rawDSN), err)
	}
	if insertSQL == "" {
		insertSQL = insertClickPostgres
		if t.Dialect == dsn.SQLite {
			insertSQL = insertClickSQLite
		}
	}
	ins, err := parseNamedWith(insertSQL, allowedInsertParam, useInsertNamed)
	if err != nil {
		return nil, fmt.Errorf("insert statement: %w", configError{err})
	}
	span, err := spanQuery(t.Dialect)
	if err != nil {
		return nil, err
	}
	db, err := t.Open()
	if err != nil {
		return nil, fmt.Errorf("open store for writing %s: %w", RedactDSN(rawDSN), configError{dsn.RedactError(err, t.Secrets)})
	}
	w := &Writer{db: db, dialect: t.Dialect, insert: ins, span: span}
	if err := (&Store{db: db, dialect: t.Dialect}).check(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store for writing %s: %w", RedactDSN(rawDSN), dsn.RedactError(refused(err), t.Secrets))
	}
	return w, nil
}

// Close closes the connection pool.
func (w *Writer) Close() error { return w.db.Close() }

// HourCheck is what an hour of the store held when a repair was planned:
// Clicks rows in [From, To).
type HourCheck struct {
	From, To time.Time
	Clicks   int64
}

// ErrChanged marks a transaction that inserted nothing because the store no
// longer holds what the repair was planned on: plan again.
var ErrChanged = errors.New("the store changed since the repair was planned; nothing was written: run repair again")

// Insert puts clicks into the store in one transaction, after checking
// inside it that each hour of checks still holds the count it did: where
// one does not, it inserts nothing and the error wraps ErrChanged. On
// PostgreSQL the transaction is serializable, so a row another writer adds
// to a checked hour meanwhile fails the commit instead of slipping past the
// check; SQLite's write lock is taken when it begins. inserted, if not
// nil, is called after each row with the rows inserted so far (uncommitted).
// Either every click is committed, or none is: an error, or ctx ending
// before the commit, rolls the whole transaction back.
func (w *Writer) Insert(ctx context.Context, checks []HourCheck, clicks []Click, inserted func(n int)) (int, error) {
	opts := &sql.TxOptions{}
	if w.dialect == dsn.Postgres {
		opts.Isolation = sql.LevelSerializable
	}
	tx, err := w.db.BeginTxx(ctx, opts)
	if err != nil {
		return 0, fmt.Errorf("begin repair transaction: %w", err)
	}
	defer tx.Rollback()
	for _, h := range checks {
		n, err := w.count(ctx, tx, h.From, h.To)
		if err != nil {
			return 0, err
		}
		if n != h.Clicks {
			return 0, fmt.Errorf("hour %s holds %d clicks, not the %d the repair was planned on: %w",
				h.From.UTC().Format(time.RFC3339), n, h.Clicks, ErrChanged)
		}
	}
	if len(clicks) > 0 {
		text, _, err := w.insert.bind(w.dialect, map[string]any{"ts": nil, "link_id": nil, "country_code": nil})
		if err != nil {
			return 0, err
		}
		stmt, err := tx.PrepareContext(ctx, text)
		if err != nil {
			return 0, fmt.Errorf("prepare insert: %w", classify(err))
		}
		defer stmt.Close()
		for i, c := range clicks {
			_, args, err := w.insert.bind(w.dialect, w.values(c))
			if err != nil {
				return 0, err
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return 0, fmt.Errorf("insert click %d of %d: %w", i+1, len(clicks), classify(err))
			}
			if inserted != nil {
				inserted(i + 1)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit repair: %w", err)
	}
	return len(clicks), nil
}

// count is the rows in [from, to), inside tx.
func (w *Writer) count(ctx context.Context, tx *sqlx.Tx, from, to time.Time) (int64, error) {
	text, args, err := w.span.bind(w.dialect, spanParams(w.dialect, from, to))
	if err != nil {
		return 0, err
	}
	var n int64
	if err := tx.QueryRowContext(ctx, text, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("re-count %s: %w", from.UTC().Format(time.RFC3339), classify(err))
	}
	return n, nil
}

// values are a click's named parameters: an unknown country is NULL, as
// in the reference schemas.
func (w *Writer) values(c Click) map[string]any {
	var country any
	if c.CountryCode != "" {
		country = c.CountryCode
	}
	var ts any = c.TS.UTC()
	if w.dialect == dsn.SQLite {
		ts = sqliteTime(c.TS)
	}
	return map[string]any{"ts": ts, "link_id": c.LinkID, "country_code": country}
}
