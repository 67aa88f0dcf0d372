package runlock

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// sessionQueries are the three statements of a lock that lives as long
// as the database session that took it (PostgreSQL's advisory locks,
// MySQL's named locks), each answering one boolean, and their arguments.
type sessionQueries struct {
	try, held, unlock             string
	tryArgs, heldArgs, unlockArgs []any
}

// takeOnSession opens a pool on connector, pins one connection and takes
// the lock on it with q.try. The Lock's Held asks that session whether it
// still holds the lock; its Release unlocks and closes the pool, which ends
// the session and so drops the lock whatever happens to the unlock.
func takeOnSession(ctx context.Context, connector driver.Connector, q sessionQueries) (*Lock, error) {
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	var locked bool
	if err := conn.QueryRowContext(ctx, q.try, q.tryArgs...).Scan(&locked); err != nil {
		conn.Close()
		db.Close()
		return nil, err
	}
	if !locked {
		conn.Close()
		db.Close()
		return nil, ErrLocked
	}
	held := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, quickTimeout)
		defer cancel()
		var ok bool
		if err := conn.QueryRowContext(ctx, q.held, q.heldArgs...).Scan(&ok); err != nil {
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
		err := conn.QueryRowContext(ctx, q.unlock, q.unlockArgs...).Scan(&was)
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
