package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// ErrLocked is returned by Lock when another session holds the workspace's
// lock: another clickrecon run of the same workspace is in progress.
var ErrLocked = errors.New("another clickrecon run of this workspace holds the lock; it will be released when that run ends")

// The lock queries. They are two fixed function calls, kept here rather
// than in queries/ because nothing in them is ever edited or reviewed as
// SQL.
const (
	tryLockSQL = "SELECT pg_try_advisory_lock($1)"
	unlockSQL  = "SELECT pg_advisory_unlock($1)"
)

// lockApplicationName names the lock's session in pg_stat_activity, so an
// operator can see which process holds it.
const lockApplicationName = "clickrecon-lock"

// unlockTimeout bounds release: it runs at the end of a run whose own
// context may already be cancelled (SIGTERM, the deadline).
const unlockTimeout = 5 * time.Second

// Lock takes a PostgreSQL session-level advisory lock keyed by workspaceID,
// so that two runs of one workspace never overlap (the nightly CronJob and
// a backfill started by hand, say). It does not wait: when another session
// holds the lock it returns an error wrapping ErrLocked.
//
// The lock lives on a connection of its own, opened from rawDSN and held
// until release is called. It needs no privilege and touches no table, so a
// read-only role will do. If the process dies or the connection drops,
// PostgreSQL ends the session and the lock goes with it: a crashed run never
// leaves a stale lock behind.
//
// release unlocks and closes the connection; it uses its own short timeout,
// so that it still works after the run's context is cancelled, and a second
// call does nothing.
//
// For a sqlite: DSN, Lock takes nothing and returns a release that does
// nothing: an embedded store is a file on one machine, read by the one
// process that was given it, and SQLite has no lock that outlives a
// connection the way an advisory lock does.
func Lock(ctx context.Context, rawDSN, workspaceID string) (release func() error, err error) {
	if scheme, _, _ := strings.Cut(rawDSN, ":"); strings.EqualFold(scheme, "sqlite") {
		// Not parsed: the file need not exist yet (a history database
		// that migrate has still to create), and nothing is opened.
		return func() error { return nil }, nil
	}
	t, err := parseDSN(rawDSN)
	if err != nil {
		return nil, fmt.Errorf("lock workspace %s: %w", workspaceID, err)
	}
	lockDSN, err := dsn.WithDefaultParam(t.Conn, "application_name", lockApplicationName)
	if err != nil {
		return nil, fmt.Errorf("lock workspace %s on %s: %w", workspaceID, RedactDSN(rawDSN), dsn.RedactError(err, t.Secrets))
	}
	release, err = tryLock(ctx, lockDSN, lockKey(workspaceID))
	if err != nil {
		return nil, fmt.Errorf("lock workspace %s on %s: %w", workspaceID, RedactDSN(rawDSN), dsn.RedactError(refused(err), t.Secrets))
	}
	return release, nil
}

// tryLock opens a pool on connURL, pins one connection and takes the
// advisory lock key on it.
func tryLock(ctx context.Context, connURL string, key int64) (func() error, error) {
	connector, err := pq.NewConnector(connURL)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	var locked bool
	if err := conn.QueryRowContext(ctx, tryLockSQL, key).Scan(&locked); err != nil {
		conn.Close()
		db.Close()
		return nil, err
	}
	if !locked {
		conn.Close()
		db.Close()
		return nil, ErrLocked
	}

	var (
		once       sync.Once
		releaseErr error
	)
	release := func() error {
		once.Do(func() {
			// Closing the pool ends the session, which drops the lock
			// whatever happens to the unlock: it is said explicitly only
			// to learn whether the lock was still held.
			ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
			defer cancel()
			var held bool
			err := conn.QueryRowContext(ctx, unlockSQL, key).Scan(&held)
			conn.Close()
			db.Close()
			switch {
			case err != nil:
				releaseErr = fmt.Errorf("release advisory lock: %w", err)
			case !held:
				releaseErr = errors.New("release advisory lock: it was no longer held (the connection was reset during the run)")
			}
		})
		return releaseErr
	}
	return release, nil
}

// lockKey is the advisory lock key of a workspace: the 64-bit FNV-1a hash
// of "clickrecon:" and its id. It must never change: two versions of the
// job that computed different keys would no longer exclude each other.
//
// In pg_locks (locktype advisory), classid holds its high 32 bits and objid
// its low 32 bits.
func lockKey(workspaceID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("clickrecon:" + workspaceID))
	return int64(h.Sum64())
}
