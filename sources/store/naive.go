package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
)

// naiveSample is how many of the window's rows a SQLite store's Naive
// looks at.
const naiveSample = "1000"

// Naive says how the events preset's click times are read when they carry
// no offset or zone: Column names what holds them, Zone the zone they are
// read in (STORE_TIMESTAMP_TZ, UTC by default). The zero Naive is a store
// whose times are instants.
type Naive struct {
	Column string
	Zone   *time.Location
}

// Assumed reports whether the store reads times without an offset.
func (n Naive) Assumed() bool { return n.Column != "" }

// Note is the sentence a report, stdout and the log say of it: the zone is
// an assumption clickrecon cannot check, and how to change it.
func (n Naive) Note() string {
	if !n.Assumed() {
		return ""
	}
	return fmt.Sprintf("%s holds times without an offset or zone; they were read as wall-clock times in %s "+
		"(set STORE_TIMESTAMP_TZ to the zone they were written in, if it is another)", n.Column, n.Zone)
}

// WallZone is the zone whose DST makes wall times ambiguous: Zone when
// times are read without an offset in a zone other than UTC, nil
// otherwise. A repair compares such a column's clicks by wall-clock time.
func (n Naive) WallZone() *time.Location {
	if !n.Assumed() || n.Zone == nil || n.Zone.String() == "UTC" {
		return nil
	}
	return n.Zone
}

// Naive reads, for the events preset, whether clicks.ts holds times
// without an offset: a PostgreSQL timestamp (without time zone) or a
// MySQL DATETIME column, or, on SQLite, a row written as text without an
// offset among the first naiveSample of the window (a day either side),
// so that a clean night does not read every row of it twice. A custom
// query's, or a daily store's, times are not known and reported as
// instants. It reads the catalog, or, on SQLite, the start of one range of
// the index on julianday(ts).
func (s *Store) Naive(ctx context.Context, q Query, w reconcile.Window) (Naive, error) {
	if q.name != PresetEvents {
		return Naive{}, nil
	}
	var column string
	var err error
	switch s.dialect {
	case dsn.Postgres:
		err = s.db.GetContext(ctx, &column, `SELECT COALESCE((SELECT format_type(atttypid, atttypmod) FROM pg_catalog.pg_attribute
  WHERE attrelid = to_regclass('clicks') AND attname = 'ts' AND NOT attisdropped), '')`)
		if !strings.HasPrefix(column, "timestamp") || strings.Contains(column, "with time zone") {
			column = ""
		} else {
			column = "clicks.ts (" + column + ")"
		}
	case dsn.MySQL:
		err = s.db.GetContext(ctx, &column, "SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'clicks' AND COLUMN_NAME = 'ts'")
		if errors.Is(err, sql.ErrNoRows) {
			err = nil
		}
		if !strings.HasPrefix(column, "datetime") {
			column = ""
		} else {
			column = "clicks.ts (" + strings.ToUpper(column) + ")"
		}
	case dsn.SQLite:
		var n int64
		from, _ := w.From.Bounds(w.Loc)
		_, to := w.To.Bounds(w.Loc)
		err = s.db.GetContext(ctx, &n, `SELECT EXISTS (SELECT 1 FROM (SELECT ts FROM clicks
  WHERE julianday(ts) >= julianday(?) - 1 AND julianday(ts) < julianday(?) + 1 LIMIT `+naiveSample+`)
  WHERE NOT (ts GLOB '*[Zz]' OR ts GLOB '*[+-][0-9][0-9]:[0-9][0-9]'))`, sqliteTime(from), sqliteTime(to))
		if n > 0 {
			column = "clicks.ts (text without an offset)"
		}
	}
	if err != nil {
		return Naive{}, fmt.Errorf("read how clicks.ts holds times: %w", err)
	}
	if column == "" {
		return Naive{}, nil
	}
	return Naive{Column: column, Zone: s.tsZone}, nil
}
