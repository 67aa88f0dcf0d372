package runlock

import (
	"context"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// MySQL's named locks: GET_LOCK with a timeout of 0 does not wait, and the
// lock is the session's until RELEASE_LOCK or the session ends, as a
// PostgreSQL advisory lock is. Neither needs a privilege.
const (
	mysqlTryLockSQL = "SELECT COALESCE(GET_LOCK(?, 0), 0)"
	mysqlHeldSQL    = "SELECT COALESCE(IS_USED_LOCK(?) = CONNECTION_ID(), 0)"
	mysqlUnlockSQL  = "SELECT COALESCE(RELEASE_LOCK(?), 0)"
)

// mysqlLockName is the name of workspaceID's lock on a MySQL server: its
// Key, so that it stays within MySQL's 64 characters whatever the id.
func mysqlLockName(workspaceID string) string {
	return fmt.Sprintf("clickrecon:%016x", uint64(Key(workspaceID)))
}

// takeMySQL takes a MySQL named lock (GET_LOCK) keyed by workspaceID on a
// connection of its own, held until release: the lock of a MySQL click
// store when there is no history to lock. A read-only user will do.
func takeMySQL(ctx context.Context, t dsn.Target, workspaceID string) (*Lock, error) {
	where := "named lock on " + t.Redacted
	l, err := tryMySQL(ctx, t, mysqlLockName(workspaceID))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, dsn.RedactError(err, t.Secrets))
	}
	l.where = where
	return l, nil
}

// tryMySQL takes the named lock name on a session of its own on t.
func tryMySQL(ctx context.Context, t dsn.Target, name string) (*Lock, error) {
	connector, err := mysql.NewConnector(t.MySQLConfig)
	if err != nil {
		return nil, err
	}
	return takeOnSession(ctx, connector, sessionQueries{
		try: mysqlTryLockSQL, held: mysqlHeldSQL, unlock: mysqlUnlockSQL,
		tryArgs: []any{name}, heldArgs: []any{name}, unlockArgs: []any{name},
	})
}
