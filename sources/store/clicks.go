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
	//go:embed queries/hour_clicks_postgres.sql
	hourClicksPostgres string
	//go:embed queries/hour_clicks_sqlite.sql
	hourClicksSQLite string
)

// Click is one row of the events schema: its instant (UTC), its link, and
// its country ("" for NULL). Wall is, for a ts that holds wall-clock times
// (a PostgreSQL timestamp, a MySQL DATETIME read in STORE_TIMESTAMP_TZ),
// the wall-clock time the row holds, at the millisecond (wallLayout), and
// TS the instant the wall-clock rule reads it as (WallInstant); "" for a
// column of instants. SkippedWall says the zone never shows Wall (the
// spring DST day's missing hour), as WallInstant found when the row was
// read: which click such a row stands for cannot be told.
type Click struct {
	TS          time.Time
	LinkID      string
	CountryCode string
	Wall        string
	SkippedWall bool
}

// Clicks returns every click of the events schema in [from, to), in no
// particular order, for the events preset only.
func (s *Store) Clicks(ctx context.Context, q Query, from, to time.Time) ([]Click, error) {
	clicks, err := s.clicks(ctx, q, from, to)
	if err != nil {
		return nil, fmt.Errorf("read clicks %s..%s: %w", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), err)
	}
	return clicks, nil
}

func (s *Store) clicks(ctx context.Context, q Query, from, to time.Time) ([]Click, error) {
	if q.name != PresetEvents {
		return nil, ErrNotSupported
	}
	if s.zone != nil {
		// A wall-clock ts of the hour an autumn DST day repeats belongs
		// to either 02:00: compared click by click it would look missing
		// in one and surplus in the other, and a repair would write it
		// twice.
		return nil, fmt.Errorf("%w: repair does not read a SQLite ts written in STORE_TIMESTAMP_TZ=%s: its clicks cannot be placed exactly in time", ErrNotSupported, s.zone)
	}
	// A CHAR link_id reads "lnk_b " back as lnk_b: compared click by
	// click, a click the store holds would look lost.
	if err := s.linkCheck(ctx, q); err != nil {
		return nil, err
	}
	var nq namedQuery
	var err error
	if s.dialect == dsn.MySQL {
		nq, err = parseNamedMySQL(hourClicksMySQL, allowedParam, useNamed)
	} else {
		nq, err = hourClicksQuery(s.dialect)
	}
	if err != nil {
		return nil, err
	}
	var out []Click
	err = s.readOnly(ctx, func(tx *sqlx.Tx) error {
		return s.query(ctx, tx, nq, spanParams(s.dialect, s.wallZone, from, to), func(rows *sql.Rows) error {
			var err error
			out, err = scanClicks(s.dialect, s.wallZone, s.tsZone, rows)
			return err
		})
	})
	return out, err
}

func hourClicksQuery(d dsn.Dialect) (namedQuery, error) {
	if d == dsn.SQLite {
		return parseNamed(hourClicksSQLite)
	}
	return parseNamed(hourClicksPostgres)
}

// spanParams are :from and :to in the types d compares correctly; wall is
// the zone of a MySQL DATETIME's wall clock (nil: UTC).
func spanParams(d dsn.Dialect, wall *time.Location, from, to time.Time) map[string]any {
	switch d {
	case dsn.SQLite:
		return map[string]any{"from": sqliteTime(from), "to": sqliteTime(to)}
	case dsn.MySQL:
		f, t := mysqlBounds(wall, from, to)
		return map[string]any{"from": f, "to": t}
	}
	return map[string]any{"from": from.UTC(), "to": to.UTC()}
}

// scanClicks reads the rows of hourClicks: wall is the zone a MySQL
// DATETIME is read in (nil for UTC), pinned the zone a PostgreSQL
// timestamp's wall time is read in (the session's).
func scanClicks(d dsn.Dialect, wall, pinned *time.Location, rows *sql.Rows) ([]Click, error) {
	var out []Click
	for rows.Next() {
		var c Click
		var link, country sql.NullString
		if d == dsn.MySQL {
			var ts string
			if err := rows.Scan(&ts, &link, &country); err != nil {
				return nil, err
			}
			t, err := parseMySQLTime(ts)
			if err != nil {
				return nil, err
			}
			c.TS = t
			if wall != nil {
				c.Wall = t.Truncate(time.Millisecond).Format(wallLayout)
				c.TS, c.SkippedWall = WallInstant(t, wall)
			}
		} else if d == dsn.SQLite {
			var ts sql.NullString
			if err := rows.Scan(&ts, &link, &country); err != nil {
				return nil, err
			}
			t, err := time.Parse(time.RFC3339Nano, ts.String)
			if err != nil {
				return nil, fmt.Errorf("a click's ts %q cannot be read: %w", ts.String, err)
			}
			c.TS = t
		} else {
			var w sql.NullString
			if err := rows.Scan(&c.TS, &link, &country, &w); err != nil {
				return nil, err
			}
			if w.Valid { // a timestamp column: its wall time, as written
				c.Wall = w.String
				if t, err := time.Parse(wallLayout, c.Wall); err == nil {
					_, c.SkippedWall = WallInstant(t, pinned)
				}
			}
		}
		if !link.Valid {
			return nil, errors.New("a click has a NULL link_id")
		}
		c.TS, c.LinkID, c.CountryCode = c.TS.UTC(), link.String, country.String
		out = append(out, c)
	}
	return out, rows.Err()
}
