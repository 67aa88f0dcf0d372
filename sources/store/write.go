package store

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

var (
	//go:embed queries/insert_click_postgres.sql
	insertClickPostgres string
	//go:embed queries/insert_click_sqlite.sql
	insertClickSQLite string
)

// Writer puts lost clicks back into a click store, through a role of its
// own (STORE_WRITE_DSN): the Store that counts stays read-only. It only
// ever inserts: nothing it runs updates or deletes a row.
type Writer struct {
	db       *sqlx.DB
	dialect  dsn.Dialect
	insert   namedQuery
	span     namedQuery
	lockWait time.Duration
	// wallZone, for MySQL, is the zone of a DATETIME ts's wall clock
	// (STORE_TIMESTAMP_TZ), in which an hour's re-count is bounded; nil
	// for UTC.
	wallZone *time.Location
}

// lockedTable is the table a repair's transaction locks against other
// writers: the events schema's, the one its re-count reads, whatever the
// insert statement names. A receiver that inserts into it, directly or
// through a trigger, waits for the repair's commit.
const lockedTable = "clicks"

// DefaultLockWait is how long a repair's transaction waits for the clicks
// table when Options.LockWait is 0: a receiver's insert takes
// milliseconds, and a day whose table stays busy longer is left for the
// next run rather than waited for.
const DefaultLockWait = 10 * time.Second

// useInsertNamed is the hint an error about an insert statement's
// parameters gives; allowedInsertParam says which names it may use.
const useInsertNamed = "an insert statement may use the named parameters :ts, :link_id and :country_code"

func allowedInsertParam(name string) bool {
	switch name {
	case "ts", "link_id", "country_code":
		return true
	}
	return false
}

// OpenWriter connects to the store at t, a STORE_WRITE_DSN read by
// ParseWriteDSN, for writing. insertSQL is the statement that inserts one click, with the
// named parameters :ts (an instant: timestamptz on PostgreSQL, RFC 3339 UTC
// text with milliseconds on SQLite, a UTC DATETIME(6) value on MySQL, whose
// session time_zone is +00:00), :link_id and :country_code (NULL where
// Elido does not know it); "" is the events schema's own insert. Its
// errors name STORE_WRITE_DSN and never contain the DSN's password.
//
// With o, a click's :ts goes into a
// timestamp (without time zone) column as its wall-clock time in
// o.TimestampZone, the zone the store reads that column in, and a day's
// transaction waits o.LockWait for the clicks table.
//
// Before anything is written it refuses a server or session that is
// read-only (checkWritable: a replica, a hot standby, a role whose
// sessions are read-only), whatever the role's privileges, with
// ErrReadOnly naming why. On PostgreSQL it checks, too, that the role may
// take the lock that keeps other writers out of the clicks table while a
// day is re-counted and written (LOCK TABLE … IN SHARE MODE, which
// PostgreSQL grants only to a role with UPDATE, DELETE, TRUNCATE or
// MAINTAIN on the table) and, for the events schema's own insert, that it
// may insert into it: a role without them is a configuration error. On
// MySQL it checks the same with a locking read of an empty range and an
// EXPLAIN of the insert (checkMySQLGrants).
func OpenWriter(ctx context.Context, t dsn.Target, insertSQL string, o Options) (*Writer, error) {
	t, err := o.pin(t)
	if err != nil {
		return nil, fmt.Errorf("open store for writing (STORE_WRITE_DSN %s): %w", t.Redacted, err)
	}
	custom := insertSQL != ""
	if !custom {
		switch t.Dialect {
		case dsn.SQLite:
			insertSQL = insertClickSQLite
		case dsn.MySQL:
			insertSQL = insertClickMySQL
		default:
			insertSQL = insertClickPostgres
		}
	}
	parse, spanSQL := parseNamedWith, ""
	if t.Dialect == dsn.MySQL {
		parse, spanSQL = parseNamedMySQL, spanLockedMySQL
	}
	ins, err := parse(insertSQL, allowedInsertParam, useInsertNamed)
	if err != nil {
		return nil, fmt.Errorf("insert statement: %w", configError{err})
	}
	span, err := spanQuery(t.Dialect)
	if spanSQL != "" {
		span, err = parseNamedMySQL(spanSQL, allowedParam, useNamed)
	}
	if err != nil {
		return nil, err
	}
	lockWait := o.LockWait
	if lockWait <= 0 {
		lockWait = DefaultLockWait
	}
	if t.Dialect == dsn.MySQL {
		t = pinMySQLWriter(t, lockWait)
	}
	db, err := t.Open()
	if err != nil {
		return nil, fmt.Errorf("open store for writing (STORE_WRITE_DSN %s): %w", t.Redacted, configError{dsn.RedactError(err, t.Secrets)})
	}
	w := &Writer{db: db, dialect: t.Dialect, insert: ins, span: span, lockWait: lockWait}
	if t.Dialect == dsn.MySQL && o.zone() != time.UTC {
		w.wallZone = o.zone()
	}
	if err := w.reader().check(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store for writing (STORE_WRITE_DSN %s): %w", t.Redacted, dsn.RedactError(refused(err), t.Secrets))
	}
	if err := w.checkWritable(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store for writing (STORE_WRITE_DSN %s): %w", t.Redacted, dsn.RedactError(err, t.Secrets))
	}
	if err := w.checkGrants(ctx, !custom); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store for writing (STORE_WRITE_DSN %s): %w", t.Redacted, dsn.RedactError(err, t.Secrets))
	}
	return w, nil
}

// ParseWriteDSN reads STORE_WRITE_DSN for OpenWriter: an existing SQLite
// file, opened for writing, a PostgreSQL database, or a MySQL or MariaDB
// one under the same rules as STORE_DSN.
func ParseWriteDSN(rawDSN string) (dsn.Target, error) {
	return dsn.Parse(rawDSN, dsn.Options{Name: "STORE_WRITE_DSN", Mode: dsn.ReadWrite, MissingHint: "repair writes into an existing store", MySQL: true})
}

// Close closes the connection pool.
func (w *Writer) Close() error { return w.db.Close() }

// reader is the Writer's pool seen as a Store, for the checks and the
// identity the two share.
func (w *Writer) reader() *Store { return &Store{db: w.db, dialect: w.dialect} }

// grantsSQL says whether the role may lock the clicks table in SHARE mode
// (NULL: there is no such table on the search_path), read its ts (the
// re-count under the lock), insert into it (the whole table, or the three
// columns an insert names), and which sequences a column default of it
// draws from that the role may not use (a serial id: an insert needs
// USAGE on it; an identity column needs nothing). MAINTAIN, which also
// allows the lock, exists from PostgreSQL 17 on.
const grantsSQL = `SELECT has_table_privilege(c.t, CASE WHEN current_setting('server_version_num')::int >= 170000
           THEN 'UPDATE, DELETE, TRUNCATE, MAINTAIN' ELSE 'UPDATE, DELETE, TRUNCATE' END),
       coalesce((SELECT bool_and(has_column_privilege(c.t, a.attnum, 'SELECT')) FROM pg_catalog.pg_attribute a
                 WHERE a.attrelid = c.t AND a.attname = 'ts' AND NOT a.attisdropped), true),
       has_table_privilege(c.t, 'INSERT') OR coalesce((SELECT bool_and(has_column_privilege(c.t, a.attnum, 'INSERT')) FROM pg_catalog.pg_attribute a
                 WHERE a.attrelid = c.t AND a.attname IN ('ts', 'link_id', 'country_code') AND NOT a.attisdropped), false),
       coalesce((SELECT string_agg(d.refobjid::regclass::text, ', ' ORDER BY d.refobjid::regclass::text)
                 FROM pg_catalog.pg_attrdef ad
                 JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_attrdef'::regclass AND d.objid = ad.oid
                      AND d.refclassid = 'pg_catalog.pg_class'::regclass
                 JOIN pg_catalog.pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
                 WHERE ad.adrelid = c.t AND NOT CASE WHEN s.relkind = 'S' THEN has_sequence_privilege(d.refobjid, 'USAGE') ELSE true END), '')
FROM (SELECT to_regclass('` + lockedTable + `') AS t) AS c`

// checkGrants checks, on PostgreSQL, that the role may take the repair's
// lock on the clicks table and re-count it under the lock and, when
// insert is set, insert into it, with the sequences its defaults use.
// Each privilege it lacks is named, with the object.
func (w *Writer) checkGrants(ctx context.Context, insert bool) error {
	switch w.dialect {
	case dsn.SQLite:
		return nil
	case dsn.MySQL:
		return w.checkMySQLGrants(ctx, insert)
	}
	var lock, sel, ins sql.NullBool
	var seqs string
	if err := w.db.QueryRowContext(ctx, grantsSQL).Scan(&lock, &sel, &ins, &seqs); err != nil {
		return fmt.Errorf("read the role's grants on table %s: %w", lockedTable, classifyWrite(err))
	}
	var missing []error
	switch {
	case !lock.Valid:
		return configError{fmt.Errorf("STORE_WRITE_DSN has no table %s on its search_path: repair writes into the events schema that STORE_DSN reads", lockedTable)}
	case !sel.Bool:
		missing = append(missing, errNoSelectGrant)
	}
	if !lock.Bool {
		missing = append(missing, errNoLockGrant)
	}
	if insert && !ins.Bool {
		missing = append(missing, errNoInsertGrant)
	}
	if insert && seqs != "" {
		missing = append(missing, fmt.Errorf("STORE_WRITE_DSN's role may not use sequence %s, which a column default of table %s draws from on every insert: GRANT USAGE ON SEQUENCE %s TO the role", seqs, lockedTable, seqs))
	}
	if len(missing) > 0 {
		return configError{errors.Join(missing...)}
	}
	return nil
}

var (
	errNoSelectGrant = errors.New("STORE_WRITE_DSN's role may not read table " + lockedTable + ", which repair re-counts, hour by hour, under its lock before it writes: " +
		"GRANT SELECT ON " + lockedTable + " TO the role")
	errNoLockGrant = errors.New("STORE_WRITE_DSN's role may not lock table " + lockedTable + " against concurrent inserts while a day is re-counted and written " +
		"(LOCK TABLE " + lockedTable + " IN SHARE MODE needs UPDATE, DELETE, TRUNCATE or, from PostgreSQL 17, MAINTAIN on it): " +
		"GRANT UPDATE ON " + lockedTable + " TO the role (repair only ever inserts)")
	errNoInsertGrant = errors.New("STORE_WRITE_DSN's role may not insert into table " + lockedTable + ": GRANT INSERT ON " + lockedTable + " TO the role")
)

// ErrOtherStore marks a STORE_WRITE_DSN that names another store than
// STORE_DSN: repair writes only into the store it read and planned on.
// errors.Is(err, ErrRefused) holds too: a rerun cannot mend it.
var ErrOtherStore = errors.New("STORE_WRITE_DSN names another store than STORE_DSN: repair writes only into the store it read, and a rerun will not help: point STORE_WRITE_DSN at the same database as STORE_DSN, through a role that may insert")

// CheckTarget checks that the Writer writes into the store s reads: the
// same database (Store.Identity, compared by address when either role may
// not read the cluster's identifier) and, on PostgreSQL, the same clicks
// table (a copy in another schema of the same database is another
// store). It reads the catalog only.
func (w *Writer) CheckTarget(ctx context.Context, s *Store) error {
	read, err := targetOf(ctx, s)
	if err != nil {
		return fmt.Errorf("identify the store STORE_DSN names: %w", err)
	}
	write, err := targetOf(ctx, w.reader())
	if err != nil {
		return fmt.Errorf("identify the store STORE_WRITE_DSN names: %w", classifyWrite(err))
	}
	if read.id != write.id && read.server != "" && write.server != "" {
		read.id, write.id = read.server, write.server // one role may not read the cluster's identifier
	}
	switch {
	case read.id == write.id && read.table != write.table:
		return fmt.Errorf("%w (the same database, but table %s is another table for each: check the search_path of both; STORE_DSN is %s, STORE_WRITE_DSN %s)", configError{ErrOtherStore}, lockedTable, read, write)
	case read != write:
		return fmt.Errorf("%w (STORE_DSN is %s, STORE_WRITE_DSN %s)", configError{ErrOtherStore}, read, write)
	}
	return nil
}

// target is what CheckTarget compares: the store's identity, its server
// form (PostgreSQL: address and port, with the database's oid) and the
// oid of the table clicks resolves to.
type target struct {
	id, server, table string
}

func (t target) String() string {
	if t.table == "" {
		return t.id
	}
	return t.id + ";table=" + t.table
}

const tableSQL = "SELECT COALESCE(to_regclass('" + lockedTable + "')::oid::text, '')"

func targetOf(ctx context.Context, s *Store) (target, error) {
	id, err := s.Identity(ctx)
	if err != nil || s.dialect != dsn.Postgres {
		return target{id: id}, err
	}
	var t target
	t.id = id
	var db string
	if err := s.db.GetContext(ctx, &db, databaseSQL); err != nil {
		return t, err
	}
	if server, err := serverIdentity(ctx, s.db); err == nil {
		t.server = "postgres:server=" + server + ";db=" + db
	}
	if err := s.db.GetContext(ctx, &t.table, tableSQL); err != nil {
		return t, err
	}
	return t, nil
}

// HourCheck is what an hour of the store held when a repair was planned:
// Clicks rows in [From, To).
type HourCheck struct {
	From, To time.Time
	Clicks   int64
}

// HourWrite is an hour's clicks to put back.
type HourWrite struct {
	From, To time.Time
	Clicks   []Click
}

// Written is what a day's transaction committed.
type Written struct {
	Inserted int // the clicks committed
	// Refused holds, for each hour given, why none of its clicks was
	// written (a click the store cannot hold), or nil when all were.
	Refused []error
}

// ErrChanged marks a transaction that inserted nothing because the store no
// longer holds what the repair was planned on: plan again.
var ErrChanged = errors.New("the store changed since the repair was planned; nothing was written: run repair again")

// ErrBusy marks a transaction that inserted nothing because another writer
// kept the clicks table longer than the lock wait: run repair again (the
// next night's run retries it).
var ErrBusy = errors.New("another writer kept table " + lockedTable + " busy: nothing was written for the day; run repair again")

// Insert puts the hours' clicks into the store in one transaction. It
// first keeps other writers out of the table the count reads (PostgreSQL:
// LOCK TABLE clicks IN SHARE MODE, waiting at most the lock wait, which
// an INSERT's ROW EXCLUSIVE lock conflicts with; SQLite: the write lock
// BEGIN IMMEDIATE takes; MySQL: each hour's re-count is a locking read at
// REPEATABLE READ, whose next-key locks keep inserts into the hour out),
// then checks that each hour of checks still holds the count it did: where one does not, it inserts nothing and the error
// wraps ErrChanged. A writer whose insert was under way when the day
// began is waited for and then counted; one that comes later waits for
// the commit: no click is written twice by the two of them. An hour whose
// click the store rejects (a value its column cannot hold) is rolled back
// to a savepoint alone and said in Written.Refused; the other hours go on.
// inserted, if not nil, is called after each row with the rows inserted so
// far (uncommitted). Either the day's result is committed, or none of it
// is: an error, or ctx ending before the commit, rolls the whole
// transaction back.
func (w *Writer) Insert(ctx context.Context, checks []HourCheck, hours []HourWrite, inserted func(n int)) (Written, error) {
	var opts *sql.TxOptions // SQLite: BEGIN IMMEDIATE (dsn.ReadWrite's _txlock)
	if w.dialect == dsn.MySQL {
		opts = mysqlRepeatableRead
	}
	tx, err := w.db.BeginTxx(ctx, opts)
	if err != nil {
		return Written{}, fmt.Errorf("begin repair transaction: %w", classifyWrite(err))
	}
	defer tx.Rollback()
	if err := w.lock(ctx, tx); err != nil {
		return Written{}, err
	}
	for _, h := range checks {
		n, err := w.count(ctx, tx, h.From, h.To)
		if err != nil {
			return Written{}, err
		}
		if n != h.Clicks {
			return Written{}, fmt.Errorf("hour %s holds %d clicks, not the %d the repair was planned on: %w",
				h.From.UTC().Format(time.RFC3339), n, h.Clicks, ErrChanged)
		}
	}
	out := Written{Refused: make([]error, len(hours))}
	var stmt *sql.Stmt
	for i, h := range hours {
		if len(h.Clicks) == 0 {
			continue
		}
		if stmt == nil {
			text, _, err := w.insert.bind(w.dialect, map[string]any{"ts": nil, "link_id": nil, "country_code": nil})
			if err != nil {
				return Written{}, err
			}
			if stmt, err = tx.PrepareContext(ctx, text); err != nil {
				return Written{}, fmt.Errorf("prepare insert: %w", classifyWrite(err))
			}
			defer stmt.Close()
		}
		n, rejected, err := w.insertHour(ctx, tx, stmt, h, out.Inserted, inserted)
		if err != nil {
			return Written{}, err
		}
		out.Inserted += n
		out.Refused[i] = rejected
	}
	if err := tx.Commit(); err != nil {
		return Written{}, fmt.Errorf("commit repair: %w", classifyWrite(err))
	}
	return out, nil
}

// lock keeps other writers out of the clicks table until the transaction
// ends, on PostgreSQL; SQLite's transaction holds the write lock already,
// and MySQL's count locks each hour's range as it reads it.
func (w *Writer) lock(ctx context.Context, tx *sqlx.Tx) error {
	if w.dialect != dsn.Postgres {
		return nil
	}
	ms := strconv.FormatInt(max(w.lockWait.Milliseconds(), 1), 10)
	if _, err := tx.ExecContext(ctx, "SELECT set_config('lock_timeout', $1, true)", ms); err != nil {
		return fmt.Errorf("bound the lock wait: %w", classifyWrite(err))
	}
	if _, err := tx.ExecContext(ctx, "LOCK TABLE "+lockedTable+" IN SHARE MODE"); err != nil {
		var pqErr *pq.Error
		if errors.As(err, &pqErr) && pqErr.Code == "55P03" { // lock_not_available
			return fmt.Errorf("waited %s for table %s: %w", w.lockWait, lockedTable, ErrBusy)
		}
		if errors.As(err, &pqErr) && pqErr.Code == "42501" {
			return configError{fmt.Errorf("%w: %w", errNoLockGrant, err)}
		}
		return fmt.Errorf("lock table %s against concurrent inserts: %w", lockedTable, classifyWrite(err))
	}
	return nil
}

// insertHour inserts an hour's clicks inside a savepoint: a click the
// store rejects rolls the hour back alone and is returned as rejected;
// err is anything else, which ends the day.
func (w *Writer) insertHour(ctx context.Context, tx *sqlx.Tx, stmt *sql.Stmt, h HourWrite, before int, inserted func(int)) (n int, rejected, err error) {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT clickrecon_hour"); err != nil {
		return 0, nil, fmt.Errorf("savepoint: %w", classifyWrite(err))
	}
	for i, c := range h.Clicks {
		_, args, err := w.insert.bind(w.dialect, w.values(c))
		if err != nil {
			return 0, nil, err
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			if mysqlBusy(err) {
				return 0, nil, fmt.Errorf("insert into the hour from %s: waited %s: %w", h.From.UTC().Format(time.RFC3339), w.lockWait, ErrBusy)
			}
			if !rejects(err) || ctx.Err() != nil {
				return 0, nil, fmt.Errorf("insert click %d of the hour from %s: %w", i+1, h.From.UTC().Format(time.RFC3339), classifyWrite(err))
			}
			if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT clickrecon_hour"); rerr != nil {
				return 0, nil, fmt.Errorf("roll back the hour from %s: %w", h.From.UTC().Format(time.RFC3339), classifyWrite(rerr))
			}
			return 0, fmt.Errorf("the store rejected its click at %s (link %q): %w", c.TS.UTC().Format("2006-01-02T15:04:05.000Z07:00"), c.LinkID, err), nil
		}
		if inserted != nil {
			inserted(before + i + 1)
		}
	}
	if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT clickrecon_hour"); err != nil {
		return 0, nil, fmt.Errorf("release savepoint: %w", classifyWrite(err))
	}
	return len(h.Clicks), nil, nil
}

// rejects reports whether err is the store refusing a value (PostgreSQL
// class 22, a data exception such as a NUL byte in text, or 23, an
// integrity constraint; SQLite's constraint and mismatch errors): the
// click, not the connection or the role, is at fault.
func rejects(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		class := pqErr.Code.Class()
		return class == "22" || class == "23"
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() & 0xff {
		case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_TOOBIG:
			return true
		}
	}
	return mysqlRejects(err)
}

// classifyWrite is classify for the write side: a permission the
// STORE_WRITE_DSN role lacks, or an insert that does not fit its store,
// is a configuration error that names what to fix; others (a lost
// connection, a timeout) may pass on a retry and are returned as they are.
func classifyWrite(err error) error {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		switch {
		case pqErr.Code == "42501": // insufficient_privilege
			return configError{fmt.Errorf("STORE_WRITE_DSN's role lacks a permission repair needs (on table %s it needs SELECT, INSERT, and UPDATE for the lock; USAGE on the sequence a default draws from): %w", lockedTable, err)}
		case pqErr.Code.Class() == "42":
			return configError{fmt.Errorf("the insert does not fit the store STORE_WRITE_DSN names (check REPAIR_INSERT_FILE, or that the store has the events schema): %w", err)}
		}
		return err
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() & 0xff {
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
			return configError{fmt.Errorf("STORE_WRITE_DSN's SQLite file cannot be written (check the file's and its folder's permissions): %w", err)}
		case sqlite3.SQLITE_ERROR:
			return configError{fmt.Errorf("the insert does not fit the store STORE_WRITE_DSN names (check REPAIR_INSERT_FILE, or that the store has the events schema): %w", err)}
		}
	}
	err, _ = classifyMySQLWrite(err)
	return err
}

// count is the rows in [from, to), inside tx.
func (w *Writer) count(ctx context.Context, tx *sqlx.Tx, from, to time.Time) (int64, error) {
	text, args, err := w.span.bind(w.dialect, spanParams(w.dialect, w.wallZone, from, to))
	if err != nil {
		return 0, err
	}
	var n int64
	if err := tx.QueryRowContext(ctx, text, args...).Scan(&n); err != nil {
		if mysqlBusy(err) {
			return 0, fmt.Errorf("re-count %s: waited %s for the hour's rows of table %s: %w", from.UTC().Format(time.RFC3339), w.lockWait, lockedTable, ErrBusy)
		}
		return 0, fmt.Errorf("re-count %s: %w", from.UTC().Format(time.RFC3339), classifyWrite(err))
	}
	return n, nil
}

// values are a click's named parameters: an unknown country is NULL, as
// in the reference schemas.
func (w *Writer) values(c Click) map[string]any {
	var country any
	if c.CountryCode != "" {
		country = c.CountryCode
	}
	var ts any = c.TS.UTC()
	if w.dialect == dsn.SQLite {
		ts = sqliteTime(c.TS)
	}
	return map[string]any{"ts": ts, "link_id": c.LinkID, "country_code": country}
}
