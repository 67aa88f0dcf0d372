package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"regexp"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// The zone a custom query runs in
//
// The presets compare instants computed in Go, in sessions pinned to UTC
// (or STORE_TIMESTAMP_TZ): no setting of the database's, the role's or the
// server's changes their counts. A custom query (STORE_QUERY_FILE,
// STORE_TOTAL_QUERY_FILE) is its author's, tested in a session of their
// own, whose zone is usually theirs: date_trunc('day', ts) and ts::date on
// a timestamptz, DATE(ts) of a MySQL TIMESTAMP, group the days of that
// session's zone. So a custom query runs in a session whose zone is
// RECON_TZ (or STORE_TIMESTAMP_TZ when it is set: the zone the store's
// wall-clock columns are written in), and clickrecon check and each run
// say which (AssumedQueryZone):
//
//   - PostgreSQL: SET LOCAL TimeZone in the query's read-only transaction;
//     :from and :to stay timestamptz instants.
//   - MySQL and MariaDB: SET time_zone on the connection for the query,
//     and back to +00:00 after it (a connection that cannot be set back
//     is closed, never reused); :from and :to are the wall-clock times of
//     the day's instants in that zone, as the session reads a literal. A
//     named zone needs the server's time-zone tables; without them (a
//     MariaDB default) the query runs in UTC, as it always did, and the
//     assumption says so loudly: a fixed offset would be wrong on one side
//     of each DST change.
//   - SQLite has no session zone: :from and :to are UTC instants.

// AssumedQueryZone is the Kind of the assumption that a custom query
// means by a day what a session in the zone it runs in does.
const AssumedQueryZone = "query_zone"

// mysqlZoneName is an IANA zone name that can be written in a statement
// as it is.
var mysqlZoneName = regexp.MustCompile(`^[A-Za-z0-9_+\-/]+$`)

// sessionZone is the zone a query of text name (nameCustom, or a preset's)
// runs in, and why it is that zone, for the assumption: nil for a preset,
// which runs in the store's pinned session. On MySQL, fallback says the
// server cannot set the zone (no time-zone tables): the query runs in
// UTC.
type sessionZone struct {
	zone     *time.Location
	why      string // RECON_TZ or STORE_TIMESTAMP_TZ
	fallback bool
}

// customZone returns the session zone of a custom query on s for a run in
// loc.
func (s *Store) customZone(ctx context.Context, loc *time.Location) (sessionZone, error) {
	if s.dialect == dsn.SQLite || loc == nil {
		return sessionZone{}, nil
	}
	z := sessionZone{zone: loc, why: "RECON_TZ"}
	if s.userZone != nil {
		z = sessionZone{zone: s.userZone, why: "STORE_TIMESTAMP_TZ"}
	}
	if s.dialect == dsn.MySQL && mysqlZone(z.zone) != "+00:00" {
		ok, err := s.mysqlZoneLoaded(ctx, z.zone)
		if err != nil {
			return sessionZone{}, err
		}
		z.fallback = !ok
	}
	return z, nil
}

// mysqlZone is how a session's time_zone names zone: +00:00 for UTC,
// which needs no time-zone tables, else its IANA name.
func mysqlZone(zone *time.Location) string {
	switch zone.String() {
	case "UTC", "Etc/UTC", "Etc/UCT", "UCT", "Etc/GMT", "GMT", "Zulu", "Etc/Zulu":
		return "+00:00"
	}
	return zone.String()
}

// mysqlZoneLoaded asks the server, once per zone, whether it knows the
// named zone (its time-zone tables hold it).
func (s *Store) mysqlZoneLoaded(ctx context.Context, zone *time.Location) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok, seen := s.zonesLoaded[zone.String()]; seen {
		return ok, nil
	}
	var ok bool
	if err := s.db.QueryRowContext(ctx, "SELECT CONVERT_TZ('2000-01-01 00:00:00', '+00:00', ?) IS NOT NULL", zone.String()).Scan(&ok); err != nil {
		return false, fmt.Errorf("ask the server whether it knows the zone %s: %w", zone, classify(err))
	}
	ok = ok && mysqlZoneName.MatchString(zone.String())
	if s.zonesLoaded == nil {
		s.zonesLoaded = map[string]bool{}
	}
	s.zonesLoaded[zone.String()] = ok
	return ok, nil
}

// active says whether the query runs in z rather than in the store's
// pinned session.
func (z sessionZone) active() bool { return z.zone != nil && !z.fallback }

// note is what check and the run say of z for a custom query.
func (z sessionZone) note() string {
	if z.fallback {
		return fmt.Sprintf("the custom store query should run in a session whose time_zone is %s (%s), as its author's would, but the server has no time-zone tables and does not know that zone: "+
			"it runs in UTC (time_zone +00:00, :from and :to in UTC), so DATE(ts), or any other function of a TIMESTAMP, gives UTC days, not %s's (a fixed offset would be wrong on one side of each DST change). "+
			"Load the server's time-zone tables (mariadb-tzinfo-to-sql /usr/share/zoneinfo | mariadb mysql, or mysql_tzinfo_to_sql on MySQL), or compare ts with :from and :to only",
			z.zone, z.why, z.zone)
	}
	return fmt.Sprintf("the custom store query runs in a session whose time zone is %s (%s), as its author's would: date_trunc('day', ts), ts::date or DATE(ts) give that zone's days, "+
		"and a column without a zone (timestamp, DATETIME) compared with :from and :to is read in it (set STORE_TIMESTAMP_TZ to the zone such a column is written in, UTC for Django and Rails, and the session runs in that zone instead)",
		z.zone, z.why)
}

// readOnlyIn runs fn in a read-only transaction as readOnly does, in a
// session whose zone is z when it is active: a PostgreSQL transaction
// that sets TimeZone for itself alone, or a MySQL connection whose
// time_zone is set for the transaction and back to the pinned +00:00
// after it (closed if it cannot be).
func (s *Store) readOnlyIn(ctx context.Context, z sessionZone, fn func(tx *sqlx.Tx) error) error {
	if !z.active() {
		return s.readOnly(ctx, fn)
	}
	switch s.dialect {
	case dsn.Postgres:
		return s.readOnly(ctx, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, "SELECT set_config('TimeZone', $1, true)", z.zone.String()); err != nil {
				return fmt.Errorf("set the session's time zone to %s: %w", z.zone, classify(err))
			}
			return fn(tx)
		})
	case dsn.MySQL:
		conn, err := s.db.Connx(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SET time_zone = '"+mysqlZone(z.zone)+"'"); err != nil {
			discard(conn)
			return fmt.Errorf("set the session's time_zone to %s: %w", z.zone, classify(err))
		}
		err = func() error {
			tx, err := conn.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
			if err != nil {
				return fmt.Errorf("begin read-only transaction: %w", err)
			}
			defer tx.Rollback()
			return fn(tx)
		}()
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "SET time_zone = "+mysqlSessionZone); rerr != nil {
			discard(conn)
		}
		return err
	}
	return s.readOnly(ctx, fn)
}

// discard closes conn instead of giving it back to the pool: its session
// is not the one every connection of the store has.
func discard(conn *sqlx.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}
