// Package store counts clicks per day in the customer's own click store,
// PostgreSQL (lib/pq), MySQL or MariaDB (go-sql-driver/mysql) or SQLite
// (modernc.org/sqlite), for comparison with Elido's counts.
//
// # Opening
//
// ParseDSN reads STORE_DSN once, where it is validated, and Open takes
// what it read; its dialect picks the driver: postgres://… or postgresql://… for
// PostgreSQL (connect_timeout=10 is added when the DSN sets none),
// mysql://… or mariadb://… for MySQL and MariaDB (see mysql.go: read-only
// sessions, time_zone pinned to +00:00), sqlite:PATH
// for an existing SQLite file, opened read-only (mode=ro and
// PRAGMA query_only): a missing file is an error, never a new database.
// Errors never contain the DSN's password; a parsed DSN's Redacted is fit
// for a log line. ParseWriteDSN and OpenWriter do the same for
// STORE_WRITE_DSN, which repair writes through.
//
// # Queries
//
// The count query is a preset, PresetEvents (table clicks, one row per
// click) or PresetDaily (table click_counts, a counter per link and day),
// whose reference schemas live in sql/store, or a custom query
// (STORE_QUERY_FILE) written in the store's dialect. A query runs once per
// calendar day, as a single statement, with the named parameters
//
//	:day   the day, text YYYY-MM-DD
//	:from  the day's first instant in the zone
//	:to    the next day's first instant (the day is [:from, :to), 23 or 25
//	       hours long on DST days)
//	:tz    the zone's IANA name, such as Europe/Warsaw
//
// and returns rows (link_id, clicks): exactly those two columns, in either
// order, names compared case-insensitively. A query need not use every
// parameter; any other :name, and positional parameters ($1), are errors.
// PostgreSQL casts (:day::date, ts::date) work as usual, and colons inside
// string literals and comments are left alone.
//
// On PostgreSQL, :from and :to are timestamptz values, so a query compares
// them with a timestamptz column directly. A timestamp (without time zone)
// column is read in the session TimeZone, which the store pins on every
// connection to UTC, or to Options.TimestampZone (STORE_TIMESTAMP_TZ) for a
// column that holds local wall-clock times: the database's, role's or DSN's
// own TimeZone never changes a count. On SQLite they are RFC 3339 UTC strings with millisecond
// precision, such as 2026-11-26T23:00:00.000Z: compare them as instants,
// julianday(ts) >= julianday(:from), never as strings, unless every ts is
// written in exactly that form.
//
// On MySQL and MariaDB, :from and :to are DATETIME(6) text in UTC (or in
// STORE_TIMESTAMP_TZ, for a DATETIME ts that holds local wall-clock times),
// compared with a DATETIME or TIMESTAMP ts directly; the session time_zone
// is +00:00, so a TIMESTAMP column is compared as an instant, and
// STORE_TIMESTAMP_TZ is refused for it. Placeholders are '?' (a parameter
// used twice is bound twice), '#' and "-- " start comments, and a backslash
// escapes a quote inside a string, as the server reads them by default.
//
// On SQLite, the events preset reads ts as julianday(ts) does: RFC 3339
// text with an offset (or Z) as written, and text without one as UTC, or,
// with Options.TimestampZone (STORE_TIMESTAMP_TZ), as wall-clock time in
// that zone: such rows are compared with the wall-clock times of the
// bounds in the zone, computed in Go, so a DST day has its 23 or 25 hours
// (the repeated hour of an autumn day cannot be told apart in wall-clock
// text: its clicks count in the second of the two hours). A custom query on
// SQLite gets :from and :to as UTC instants and is refused with another
// zone. julianday() cannot read an epoch number, an
// offset without a colon (+0100) or garbage, and such a row has no day:
// CheckTimes counts them, so that no day is checked while they exist,
// instead of the row being left out of every day silently.
//
// Rows are read as follows. link_id must be text: NULL is an error (count
// such clicks under a name of your choice with COALESCE(link_id, 'unknown')
// if they are wanted).
// clicks must be a whole number ≥ 0 (an integer, or a numeric or float with
// no fraction, as sum() may return). Rows with the same link_id are added
// up, so a query may return one row per click or per source table. A count,
// or a day's sum, above MaxClicks (2^53-1) fails the day's read with
// ErrBadQuery: no day has that many clicks, and a wrapped or rounded number
// must never reach a comparison.
//
// # Totals
//
// The main pass needs each day's total only: Totals reads it with a
// count(*) over the day's instants (events, an index search on ts), a
// sum(clicks) of the day's counters (daily, the primary key), or a custom
// total query (Query.WithTotal, STORE_TOTAL_QUERY_FILE): the same named
// parameters, one row with one column, the day's clicks. A custom query
// without one is totalled by summing its rows: correct, and as slow as the
// per-link count. Counts, CountryCounts and HourlyCounts are for the days
// that differ.
//
// Every query runs inside a read-only transaction that is always rolled
// back, on a connection that, for SQLite, cannot write at all: a count
// query can never change the customer's data. On PostgreSQL the statement is
// prepared, so it is parsed as exactly one statement.
//
// The package logs nothing; errors name the operation and the day.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// Store is an open connection pool to a click store.
type Store struct {
	db      *sqlx.DB
	dialect dsn.Dialect
	// jitOff says the store turned JIT off for its sessions (pin): the
	// DSN did not choose.
	jitOff bool
	// zone is STORE_TIMESTAMP_TZ for a SQLite store, when it is not UTC:
	// the zone a ts written as text without an offset is wall-clock time
	// in (zonedSQLite). nil for UTC and for PostgreSQL, whose sessions
	// read timestamps in the zone themselves (pin).
	zone *time.Location
	// wallZone, for MySQL, is the zone :from and :to are written in
	// (STORE_TIMESTAMP_TZ); nil for UTC.
	wallZone *time.Location
	// tsZone is STORE_TIMESTAMP_TZ, UTC by default: the zone a ts without
	// an offset is read in, on every engine (Naive).
	tsZone *time.Location

	mu sync.Mutex
	// catalog holds, per table, its text columns as the catalog showed
	// them (columnsOf): a repair's EventColumns and linkCheck read the
	// clicks table's once.
	catalog map[string]map[string]TextColumn
}

// Options say how a store is read. The zero Options is the default.
type Options struct {
	// TimestampZone is the zone of a ts that holds local wall-clock
	// times: on PostgreSQL, a ts column of type timestamp (without time
	// zone), read in the session TimeZone of every connection; on SQLite,
	// a ts written as text without an offset (text with an offset or Z is
	// read as written); on MySQL, a DATETIME ts's wall clock, in which
	// :from and :to are written (refused for a TIMESTAMP ts). UTC when nil.
	TimestampZone *time.Location
	// LockWait bounds how long a Writer's day transaction waits for the
	// clicks table while another writer holds it (PostgreSQL
	// lock_timeout; MySQL innodb_lock_wait_timeout, in whole seconds, for
	// an hour's rows); DefaultLockWait when 0. A day that waits longer is
	// left untouched (ErrBusy).
	LockWait time.Duration
}

// Open connects to the store at t, a STORE_DSN read by ParseDSN
// (postgres://…, mysql://… or sqlite:PATH), and checks that it answers.
// Its errors show the DSN with the password redacted.
func Open(ctx context.Context, t dsn.Target, o Options) (*Store, error) {
	jitOff := t.Dialect == dsn.Postgres && !setsJIT(t)
	t, err := o.pin(t)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", t.Redacted, err)
	}
	s, err := open(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", t.Redacted, dsn.RedactError(refused(err), t.Secrets))
	}
	s.jitOff = jitOff
	s.tsZone = o.zone()
	if t.Dialect == dsn.SQLite && o.TimestampZone != nil && o.TimestampZone.String() != "UTC" {
		s.zone = o.TimestampZone
	}
	if t.Dialect == dsn.MySQL && o.zone() != time.UTC {
		s.wallZone = o.zone()
	}
	return s, nil
}

// pin sets the session TimeZone of every PostgreSQL connection to the
// timestamp zone, UTC by default. Day bounds are timestamptz values, and
// comparing them with a timestamp column reads that column in the session
// TimeZone: pinned, the database's or role's own TimeZone setting (or an
// options=-c TimeZone=… in the DSN) never changes a count. The zone is a
// startup parameter, which PostgreSQL applies after the server, database,
// role and options settings, so it costs no round trip. So is jit=off.
func (o Options) pin(t dsn.Target) (dsn.Target, error) {
	zone := "UTC"
	if o.TimestampZone != nil {
		zone = o.TimestampZone.String()
	}
	if zone == "Local" || zone == "" {
		return t, configError{errors.New("STORE_TIMESTAMP_TZ must name an IANA zone such as UTC or America/New_York")}
	}
	if t.Dialect == dsn.MySQL {
		return pinMySQL(t, o.zone()), nil
	}
	if t.Dialect == dsn.SQLite {
		return t, nil // the bounds carry the zone (Store.zone)
	}
	u, err := url.Parse(t.Conn)
	if err != nil {
		return t, errors.New("malformed PostgreSQL DSN")
	}
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "timezone") {
			q.Del(k)
		}
	}
	q.Set("TimeZone", zone)
	// A day's count is a search of an index that PostgreSQL plans above
	// jit_above_cost on a big table, and then compiles at every run of the
	// prepared statement: for a year of daily counters JIT took longer than
	// the counts (BENCHMARKS.md). A DSN that sets jit itself keeps it. The
	// one statement over many days turns it back on (totalsChunk).
	if !q.Has("jit") {
		q.Set("jit", "off")
	}
	u.RawQuery = q.Encode()
	t.Conn = u.String()
	return t, nil
}

// zone is TimestampZone, UTC when nil.
func (o Options) zone() *time.Location {
	if o.TimestampZone == nil {
		return time.UTC
	}
	return o.TimestampZone
}

// setsJIT reports whether a PostgreSQL DSN sets jit itself.
func setsJIT(t dsn.Target) bool {
	u, err := url.Parse(t.Conn)
	return err == nil && u.Query().Has("jit")
}

// ErrRefused marks a store that cannot be opened as configured, for a
// reason a retry cannot mend: the database refused the DSN's role, password
// or database name, the DSN is not one a driver accepts (an unknown sslmode,
// a port out of range), the SQLite file is not a database, or
// STORE_TIMESTAMP_TZ does not fit the store. Fix the configuration.
var ErrRefused = errors.New("the database refused the connection: check the user, password and database in the DSN")

// configError is a configuration mistake that a retry cannot mend, with a
// message of its own: errors.Is(err, ErrRefused) holds for it.
type configError struct{ err error }

func (e configError) Error() string        { return e.err.Error() }
func (e configError) Unwrap() error        { return e.err }
func (e configError) Is(target error) bool { return target == ErrRefused }

// refused marks the errors of a connection the database refused for good
// (dsn.Refused) with ErrRefused: with its own message for a wrong role,
// password or database, as they are for the rest (no SSL on the server, a
// SQLite file that is not a database).
func refused(err error) error {
	var pqErr *pq.Error
	var myErr *mysql.MySQLError
	switch {
	case !dsn.Refused(err):
		return err
	case errors.As(err, &pqErr), errors.As(err, &myErr):
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return configError{err}
}

// ParseDSN reads STORE_DSN for Open: PostgreSQL, MySQL or MariaDB, or a
// SQLite file that must exist, opened read-only.
func ParseDSN(rawDSN string) (dsn.Target, error) {
	return dsn.Parse(rawDSN, dsn.Options{Name: "STORE_DSN", Mode: dsn.ReadOnly, MissingHint: "check STORE_DSN", MySQL: true})
}

func open(ctx context.Context, t dsn.Target) (*Store, error) {
	open := t.Open
	if t.Dialect == dsn.MySQL {
		open = func() (*sqlx.DB, error) { return openMySQL(t) }
	}
	db, err := open()
	if err != nil {
		return nil, configError{err} // the driver cannot use the DSN
	}
	s := &Store{db: db, dialect: t.Dialect}
	if err := s.check(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// check connects and reads the schema, so that an unreachable server, bad
// credentials or a file that is not a database fail Open.
func (s *Store) check(ctx context.Context) error {
	q := "SELECT count(*) FROM pg_catalog.pg_namespace"
	switch s.dialect {
	case dsn.SQLite:
		q = "SELECT count(*) FROM sqlite_schema"
	case dsn.MySQL:
		q = mysqlCheckSQL
	}
	var n int64
	return s.db.QueryRowContext(ctx, q).Scan(&n)
}

// Close closes the connection pool.
func (s *Store) Close() error { return s.db.Close() }

// readOnly runs fn in a read-only transaction and rolls it back: nothing a
// store query does can be committed.
func (s *Store) readOnly(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	tx, err := s.db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin read-only transaction: %w", err)
	}
	defer tx.Rollback()
	return fn(tx)
}

// query binds params into nq, runs it on tx and passes the open rows to
// read. The statement is prepared first: PostgreSQL then parses it as one
// statement, never as a script that could COMMIT and go on writing.
func (s *Store) query(ctx context.Context, tx *sqlx.Tx, nq namedQuery, params map[string]any, read func(*sql.Rows) error) error {
	text, args, err := nq.bind(s.dialect, params)
	if err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, text)
	if err != nil {
		return classify(err)
	}
	defer stmt.Close()
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	if err := read(rows); err != nil {
		if errors.Is(err, ctx.Err()) && ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("%w: %w", ErrBadQuery, err) // the rows are not (link_id, clicks) counts
	}
	return classify(rows.Err())
}

// ErrBadQuery marks an error a retry cannot mend: the query does not fit
// the database (a syntax error, a table or column that does not exist, a
// permission it lacks), tries to write, or returns rows that are not
// (link_id, clicks) counts, or the table holds click times that cannot be
// read (UnreadableError). Fix the query, the preset, the role or the data.
var ErrBadQuery = errors.New("the store query does not fit this database (check STORE_PRESET, events or daily, or give STORE_QUERY_FILE)")

// classify marks the database errors that say the query itself is wrong
// with ErrBadQuery; others (a lost connection, a timeout) may pass on a
// retry and are returned as they are.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		// Class 42: syntax error or access rule violation (undefined
		// table or column, insufficient privilege); class 22: a data
		// exception the query causes (a division by zero, a cast that
		// fails); 25006: a write in a read-only transaction.
		if class := pqErr.Code.Class(); class == "42" || class == "22" || pqErr.Code == "25006" {
			return fmt.Errorf("%w: %w", ErrBadQuery, err)
		}
		return err
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() & 0xff { // the primary result code
		case sqlite3.SQLITE_ERROR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_AUTH:
			return fmt.Errorf("%w: %w", ErrBadQuery, err)
		}
	}
	err, _ = classifyMySQL(err)
	return err
}
