package runlock

import (
	"context"
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
func takeAdvisory(ctx context.Context, t dsn.Target, workspaceID string) (*Lock, error) {
	where := "advisory lock on " + t.Redacted
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

// tryAdvisory takes the advisory lock key on a session of its own on
// connURL.
func tryAdvisory(ctx context.Context, connURL string, key int64) (*Lock, error) {
	connector, err := pq.NewConnector(connURL)
	if err != nil {
		return nil, err
	}
	u := uint64(key)
	return takeOnSession(ctx, connector, sessionQueries{
		try: tryLockSQL, held: heldSQL, unlock: unlockSQL,
		tryArgs: []any{key}, heldArgs: []any{int64(u >> 32), int64(u & 0xffffffff)}, unlockArgs: []any{key},
	})
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
