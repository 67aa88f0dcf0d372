package store

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

var (
	//go:embed queries/unreadable_postgres.sql
	unreadablePostgres string
	//go:embed queries/unreadable_sqlite.sql
	unreadableSQLite string
)

// UnreadableError says that the events table holds rows whose click time
// cannot be read as an instant. Such a click cannot be placed on a day, so
// it could belong to any day of any window: no day can be checked until the
// rows are fixed or removed. errors.Is(err, ErrBadQuery) holds for it, as a
// retry cannot mend it.
type UnreadableError struct {
	Rows int64 // the number of such rows in the whole table
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("%d row(s) of table clicks have a ts that cannot be read as a time (an epoch number, garbage or NULL; "+
		"SQLite reads RFC 3339 text, with an offset or else as UTC): they could belong to any day, so no day can be checked; "+
		"fix or delete them (find them with: SELECT rowid, ts FROM clicks WHERE julianday(ts) IS NULL, or ts IS NULL on PostgreSQL)", e.Rows)
}

// Is makes an UnreadableError an ErrBadQuery: a retry cannot mend it.
func (e *UnreadableError) Is(target error) bool { return target == ErrBadQuery }

// CheckTimes checks that the store can read the click time of every row
// the query counts. It returns an *UnreadableError naming how many rows it
// cannot read, another error when the check fails, and nil when every row
// can be read.
//
// Only the events preset is checked: SQLite reads a ts through julianday(),
// which takes RFC 3339 text with an offset or without one (then UTC), and
// gives NULL for anything else, such as an epoch number or garbage; on
// PostgreSQL a NULL ts is the only unreadable one. The daily preset's
// reference schema cannot hold an unreadable day, and a custom query's
// rows are its own to read.
//
// The whole table is checked, not a window's days: an unreadable row has
// no day. One index search on ts.
func (s *Store) CheckTimes(ctx context.Context, q Query) error {
	if q.name != PresetEvents {
		return nil
	}
	if err := s.checkWallZone(ctx); err != nil {
		return err
	}
	n, err := s.unreadable(ctx)
	if err != nil {
		return fmt.Errorf("check the click times: %w", err)
	}
	if n > 0 {
		return &UnreadableError{Rows: n}
	}
	return nil
}

func (s *Store) unreadable(ctx context.Context) (int64, error) {
	text := unreadablePostgres
	switch s.dialect {
	case dsn.SQLite:
		text = unreadableSQLite
	case dsn.MySQL:
		text = unreadableMySQL
	}
	nq, err := parseNamed(text)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.readOnly(ctx, func(tx *sqlx.Tx) error {
		return s.query(ctx, tx, nq, nil, func(rows *sql.Rows) error {
			for rows.Next() {
				if err := rows.Scan(&n); err != nil {
					return err
				}
			}
			return nil
		})
	})
	return n, err
}
