package store

import (
	"context"

	"github.com/clickrecon/clickrecon/internal/runlock"
)

// ErrLocked is runlock.ErrLocked: another run of the workspace holds the
// lock.
var ErrLocked = runlock.ErrLocked

// Lock takes workspaceID's run lock on rawDSN, as runlock.Take does (a
// PostgreSQL advisory lock, or an flock beside a SQLite file), and returns
// its release. It remains for the run's current wiring; new code calls
// runlock.Take, whose Lock can also be checked to be still held.
func Lock(ctx context.Context, rawDSN, workspaceID string) (release func() error, err error) {
	l, err := runlock.Take(ctx, rawDSN, workspaceID)
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}
