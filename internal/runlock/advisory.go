package runlock

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// The advisory lock queries. They are fixed calls, kept here rather than
// in .sql files because nothing in them is ever edited or reviewed as SQL.
const (
	tryLockSQL = "SELECT pg_try_advisory_lock($1)"
	unlockSQL  = "SELECT pg_advisory_unlock($1)"
	// heldSQL asks, on the lock's own session, whether that session still
	// holds the lock: a query that fails means the session is gone.
	heldSQL = `SELECT EXISTS (
		SELECT 1 FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()
		  AND classid = $1 AND objid = $2 AND objsubid = 1)`
)

// applicationName names the lock's session in pg_stat_activity, so an
// operator can see which process holds it.
const applicationName = "clickrecon-lock"

// quickTimeout bounds a release and a check: release runs at the end of a
// run whose own context may already be cancelled (SIGTERM, the deadline),
// and a check must not hang a run on a dead network.
const quickTimeout = 5 * time.Second

// takeAdvisory takes a PostgreSQL session-level advisory lock keyed by
// workspaceID on a connection of its own, held until release. It needs no
// privilege and touches no table, so a read-only role will do.
func takeAdvisory(ctx context.Context, rawDSN, workspaceID string) (*Lock, error) {
	t, err := dsn.Parse(rawDSN, dsn.Options{})
	if err != nil {
		return nil, err
	}
	where := "advisory lock on " + dsn.Redact(rawDSN)
	conn, err := dsn.WithDefaultParam(t.Conn, "application_name", applicationName)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	l, err := tryAdvisory(ctx, conn, Key(workspaceID))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, dsn.RedactError(err, t.Secrets))
	}
	l.where = where
	return l, nil
}

// tryAdvisory opens a pool on connURL, pins one connection and takes the
// advisory lock key on it.
func tryAdvisory(ctx context.Context, connURL string, key int64) (*Lock, error) {
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
	u := uint64(key)
	held := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, quickTimeout)
		defer cancel()
		var ok bool
		if err := conn.QueryRowContext(ctx, heldSQL, int64(u>>32), int64(u&0xffffffff)).Scan(&ok); err != nil {
			return fmt.Errorf("%w (its session is gone: %v)", ErrLost, err)
		}
		if !ok {
			return fmt.Errorf("%w (its session no longer holds it)", ErrLost)
		}
		return nil
	}
	release := func() error {
		// Closing the pool ends the session, which drops the lock whatever
		// happens to the unlock: it is said explicitly only to learn
		// whether the lock was still held.
		ctx, cancel := context.WithTimeout(context.Background(), quickTimeout)
		defer cancel()
		var was bool
		err := conn.QueryRowContext(ctx, unlockSQL, key).Scan(&was)
		conn.Close()
		db.Close()
		switch {
		case err != nil:
			return err
		case !was:
			return errors.New("it was no longer held (the connection was reset during the run)")
		}
		return nil
	}
	return &Lock{held: held, release: release}, nil
}

// Key is the advisory lock key of a workspace: the 64-bit FNV-1a hash of
// "clickrecon:" and its id. It must never change: two versions of the job
// that computed different keys would no longer exclude each other. The
// lock file of the embedded setup is named after it too.
//
// In pg_locks (locktype advisory), classid holds its high 32 bits and objid
// its low 32 bits.
func Key(workspaceID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("clickrecon:" + workspaceID))
	return int64(h.Sum64())
}
