// Package runlock keeps two clickrecon runs of one workspace from
// overlapping, in every setup: a PostgreSQL session-level advisory lock
// when the history or the store is PostgreSQL, else an exclusive flock(2)
// on a lock file beside the SQLite history (or beside the SQLite store
// when there is no history), or a MySQL named lock (GET_LOCK) on a MySQL
// or MariaDB store when there is no history.
//
// Every lock dies with its holder: PostgreSQL and MySQL end a dead
// process's session and the kernel closes its files, so a crashed run never
// leaves a stale lock behind. Both can be checked (Held) immediately before a run
// posts or records anything: a PostgreSQL session can be terminated under
// a live run (a failover, pg_terminate_backend), after which another run
// may take the lock.
//
// Errors never contain a DSN's password; the package logs nothing.
package runlock

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// ErrLocked is returned by Take when another run of the same workspace
// holds the lock.
var ErrLocked = errors.New("another clickrecon run of this workspace holds the lock; it will be released when that run ends")

// ErrLost is returned by Held when the lock is no longer this run's: its
// PostgreSQL session ended, its lock file was removed or replaced, or it
// was released. Another run may hold it now, so nothing may be posted or
// recorded.
var ErrLost = errors.New("the run lock was lost: another run may hold it now, so nothing is posted or recorded")

// Lock is a workspace's run lock, held until Release.
type Lock struct {
	where   string
	held    func(ctx context.Context) error
	release func() error

	once       sync.Once
	releaseErr error
}

// On returns the database whose lock keeps two runs apart: the first
// PostgreSQL one of the history and the store (an advisory lock is seen by
// every machine), else the SQLite history, else the store (a MySQL store
// is locked with a named lock, seen by every machine too). A zero Target
// is a database not set (no history); On returns one only when both are.
func On(history, store dsn.Target) dsn.Target {
	for _, t := range []dsn.Target{history, store} {
		if t.Dialect == dsn.Postgres {
			return t
		}
	}
	if !history.IsZero() {
		return history
	}
	return store
}

// Take takes workspaceID's run lock on t without waiting: a PostgreSQL
// advisory lock for PostgreSQL, a MySQL named lock (GET_LOCK) for MySQL
// and MariaDB, an flock on a lock file beside the file for SQLite (the file
// need not exist: a history that migrate has still to create). When
// another run holds it, the error wraps ErrLocked. Release it with Release.
func Take(ctx context.Context, t dsn.Target, workspaceID string) (*Lock, error) {
	var (
		l   *Lock
		err error
	)
	switch t.Dialect {
	case dsn.Postgres:
		l, err = takeAdvisory(ctx, t, workspaceID)
	case dsn.MySQL:
		l, err = takeMySQL(ctx, t, workspaceID)
	case dsn.SQLite:
		l, err = takeFile(t, workspaceID)
	default:
		err = errors.New("no database to lock")
	}
	if err != nil {
		return nil, fmt.Errorf("lock workspace %s: %w", workspaceID, err)
	}
	return l, nil
}

// String says where the lock is, for a log line: never a password.
func (l *Lock) String() string { return l.where }

// Held returns nil while the lock is still this run's, and an error
// wrapping ErrLost when it is not. Call it immediately before every Slack
// post and every write to the history; it is cheap (one query on the
// lock's own connection, or a stat). An error that does not wrap ErrLost
// never happens: not knowing is treated as lost.
func (l *Lock) Held(ctx context.Context) error {
	if err := l.held(ctx); err != nil {
		return fmt.Errorf("check run lock %s: %w", l.where, err)
	}
	return nil
}

// Release releases the lock. It works after the run's context is
// cancelled (it bounds itself), and a second call does nothing. It returns
// an error when the lock had been lost during the run.
func (l *Lock) Release() error {
	l.once.Do(func() {
		if err := l.release(); err != nil {
			l.releaseErr = fmt.Errorf("release run lock %s: %w", l.where, err)
		}
	})
	return l.releaseErr
}
