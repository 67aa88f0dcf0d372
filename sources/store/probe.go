package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
)

// Probe checks, before a run asks Elido for anything, that the store at
// t opens and that q fits it: each statement a run would use (the
// count query, its total query, the preset's chunk query) is prepared,
// never run, in a read-only transaction. Preparing makes the database
// resolve every table and column, so a missing table (STORE_PRESET=daily on
// an events database) or a column that does not exist fails here, in a
// millisecond, instead of once per day of the window; a slow or strange
// query costs nothing, as it does not run.
//
// The error is Open's (errors.Is ErrRefused: the DSN is wrong; otherwise
// the server may be down, and a retry may help), or the preparation's,
// marked ErrBadQuery when the query does not fit the database. day and loc
// only give the parameters values to bind.
func Probe(ctx context.Context, t dsn.Target, o Options, q Query, day reconcile.Date, loc *time.Location) error {
	_, err := ProbeAssumed(ctx, t, o, q, day, loc)
	return err
}

// ProbeAssumed is Probe, and returns too what the counts of q rest on
// that cannot be checked (Store.Assumptions), for clickrecon check to say.
func ProbeAssumed(ctx context.Context, t dsn.Target, o Options, q Query, day reconcile.Date, loc *time.Location) ([]Assumption, error) {
	s, err := Open(ctx, t, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := s.probe(ctx, q, day, loc); err != nil {
		return nil, err
	}
	return s.Assumptions(ctx, q, loc)
}

func (s *Store) probe(ctx context.Context, q Query, day reconcile.Date, loc *time.Location) error {
	from, to := day.Bounds(loc)
	params := s.params(day, from, to, loc)
	type statement struct {
		what string
		nq   namedQuery
		p    map[string]any
	}
	stmts := []statement{{q.name + " query", q.in(s.dialect), params}}
	if q.total.name != "" {
		stmts = append(stmts, statement{q.name + " total query", q.total.in(s.dialect), params})
	}
	if q.total.chunk != nil {
		stmts = append(stmts, statement{q.name + " total query", q.total.chunk.in(s.dialect), map[string]any{"first": day.String(), "last": day.String()}})
	}
	return s.readOnly(ctx, func(tx *sqlx.Tx) error {
		for _, st := range stmts {
			text, _, err := st.nq.bind(s.dialect, st.p)
			if err != nil {
				return fmt.Errorf("%s: %w", st.what, err)
			}
			stmt, err := tx.PrepareContext(ctx, text)
			if err != nil {
				return fmt.Errorf("%s: %w", st.what, classify(err))
			}
			stmt.Close()
		}
		return nil
	})
}
