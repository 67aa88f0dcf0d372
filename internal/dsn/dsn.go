// Package dsn reads the DSNs clickrecon opens, the click store's and the run
// history's, and keeps their passwords out of errors and logs.
//
// A DSN is postgres://… or postgresql://… for PostgreSQL through lib/pq
// (connect_timeout=10 is added when the DSN sets none), or sqlite:PATH
// (sqlite:///abs/path too) for a SQLite file through modernc.org/sqlite,
// opened as its Mode says. Parse's errors never contain the password; Redact
// gives a DSN fit for a log line and RedactError scrubs a driver's error.
package dsn

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Dialect is the database a DSN names.
type Dialect int

// The dialects a DSN can name.
const (
	Postgres Dialect = iota + 1
	SQLite
	MySQL // MySQL or MariaDB
)

// String returns the dialect's name, which is also its database/sql driver
// name (sqlx picks the bindvar style from it) and the folder of its SQL
// files.
func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case MySQL:
		return "mysql"
	}
	return "postgres"
}

// Mode is how a SQLite file is opened. It changes nothing for PostgreSQL,
// where access is a matter of the role and of transactions.
type Mode int

const (
	// ReadOnly opens an existing file that SQLite refuses to write to.
	ReadOnly Mode = iota
	// ReadWrite opens an existing file for reading and writing.
	ReadWrite
	// ReadWriteCreate is ReadWrite that creates a missing file.
	ReadWriteCreate
)

// Options say how Parse reads a DSN.
type Options struct {
	// Name is what errors call the DSN, such as HISTORY_DSN; "DSN" when
	// empty.
	Name string
	// Mode is how a SQLite file is opened; ReadOnly when zero.
	Mode Mode
	// MissingHint ends the error about a SQLite file that does not exist
	// (ReadOnly and ReadWrite): what the user should do. "check the path"
	// when empty.
	MissingHint string
	// MySQL accepts mysql:// DSNs. Only the click store (STORE_DSN, and
	// STORE_WRITE_DSN that repairs it) can be MySQL or MariaDB: without
	// it, such a DSN is refused with a message that says so.
	MySQL bool
}

// defaultConnectTimeout bounds each connection attempt to PostgreSQL when
// the DSN sets no connect_timeout, so an unreachable database fails the run
// instead of hanging until its deadline.
const defaultConnectTimeout = "10"

// sqliteBusyTimeout is how long, in milliseconds, a statement waits for a
// lock another connection holds (a writer, a concurrent migrate, a shard of
// a backfill) before it fails.
const sqliteBusyTimeout = "10000"

// acceptedForms ends the message about a DSN that is none of them.
const acceptedForms = "use postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=..., postgresql://..., mysql://USER:PASSWORD@HOST:PORT/DB?tls=... (the click store only) or sqlite:PATH"

// Target is a parsed DSN: the dialect, what to hand its driver and how to
// name it in a log line. A DSN is parsed once, where it is validated, and
// its Target is what the code that opens it takes. The zero Target is no
// DSN (IsZero).
type Target struct {
	Dialect Dialect
	// Redacted is the DSN as written with its password replaced (Redact):
	// what errors and logs show.
	Redacted string
	// Conn is the lib/pq connection URL, the SQLite file: URI, or the
	// MySQL driver's own DSN.
	Conn string
	// MySQLConfig is the MySQL driver's configuration, for MySQL.
	MySQLConfig *mysql.Config
	// Secrets are the strings that must never appear in an error: the
	// password, decoded and as written in the DSN. Hand them to
	// RedactError.
	Secrets []string
}

// IsZero reports whether t is no DSN, as for a HISTORY_DSN left unset.
func (t Target) IsZero() bool { return t.Dialect == 0 }

// String returns the redacted DSN, so that a Target printed by mistake
// shows no password.
func (t Target) String() string { return t.Redacted }

// Parse reads raw, a postgres://, postgresql://, mysql:// or sqlite: DSN.
// For SQLite it checks, unless opts.Mode is ReadWriteCreate, that the file
// exists. Its errors name the DSN as opts.Name and never contain the
// password.
func Parse(raw string, opts Options) (Target, error) {
	t, err := parse(raw, opts)
	if err != nil {
		return Target{}, err
	}
	t.Redacted = Redact(raw)
	return t, nil
}

func parse(raw string, opts Options) (Target, error) {
	name := opts.Name
	if name == "" {
		name = "DSN"
	}
	scheme, rest, _ := strings.Cut(raw, ":")
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		return parsePostgres(raw, name)
	case "sqlite":
		return parseSQLite(rest, name, opts)
	case "mysql", "mariadb":
		if !opts.MySQL {
			return Target{}, fmt.Errorf("%s cannot be MySQL or MariaDB: only the click store (STORE_DSN, STORE_WRITE_DSN) can; use postgres://... or sqlite:PATH", name)
		}
		return parseMySQL(raw, name)
	}
	if strings.Contains(raw, "://") && isScheme(scheme) {
		return Target{}, fmt.Errorf("unsupported %s scheme %q: %s", name, scheme, acceptedForms)
	}
	return Target{}, fmt.Errorf("unsupported %s: %s", name, acceptedForms)
}

func parsePostgres(raw, name string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// Neither err nor its inner error is shown: both can quote part of
		// the password (an unescaped '#' turns it into a "port").
		return Target{}, fmt.Errorf("malformed PostgreSQL %s: it must be a URL such as postgres://USER:PASSWORD@HOST:5432/DB?sslmode=require, with the characters @ : / ? # %% in the user name and password percent-encoded", name)
	}
	if misreadUserinfo(raw, u) {
		return Target{}, fmt.Errorf("malformed PostgreSQL %s: its user name and password were not understood; percent-encode the characters @ : / ? # %% in them (# as %%23, / as %%2F, ? as %%3F, @ as %%40)", name)
	}
	t := Target{Dialect: Postgres}
	if pw, ok := u.User.Password(); ok && pw != "" {
		t.Secrets = append(t.Secrets, pw, url.QueryEscape(pw), url.PathEscape(pw))
		if written := rawPassword(raw); written != "" {
			t.Secrets = append(t.Secrets, written)
		}
	}
	q := u.Query()
	for k, vs := range q {
		if isSecretKey(k) {
			for _, v := range vs {
				if v != "" {
					t.Secrets = append(t.Secrets, v, url.QueryEscape(v))
				}
			}
		}
	}
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", defaultConnectTimeout)
		u.RawQuery = q.Encode()
	}
	t.Conn = u.String()
	// A port or an option lib/pq cannot use would otherwise fail every
	// connection attempt as if the server were down, and be retried.
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("invalid PostgreSQL %s: port %s is not a port number (1 to 65535)", name, p)
		}
	}
	if _, err := pq.NewConnector(t.Conn); err != nil {
		return Target{}, fmt.Errorf("invalid PostgreSQL %s: %w", name, RedactError(err, t.Secrets))
	}
	return t, nil
}

// sqliteHeader is how every SQLite database file begins.
const sqliteHeader = "SQLite format 3\x00"

// notSQLite reports whether the file at path has content that is not a
// SQLite database. An empty file is an empty database; a file that cannot
// be read is left for SQLite to report.
func notSQLite(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	n, _ := io.ReadFull(f, head)
	return n > 0 && string(head[:n]) != sqliteHeader
}

// parseSQLite reads the PATH of sqlite:PATH (sqlite:///abs/path too).
func parseSQLite(path, name string, opts Options) (Target, error) {
	path = strings.TrimPrefix(path, "//")
	if path == "" {
		return Target{}, fmt.Errorf("sqlite %s names no file: %s", name, acceptedForms)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Target{}, fmt.Errorf("sqlite path %s: %w", path, err)
	}
	if opts.Mode != ReadWriteCreate {
		fi, err := os.Stat(abs)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			hint := opts.MissingHint
			if hint == "" {
				hint = "check the path"
			}
			return Target{}, notExistError(fmt.Sprintf("sqlite file %s does not exist (%s)", abs, hint))
		case err != nil:
			return Target{}, fmt.Errorf("sqlite file %s: %w", abs, err)
		case fi.IsDir():
			return Target{}, fmt.Errorf("sqlite path %s is a directory, not a database file", abs)
		case notSQLite(abs):
			return Target{}, fmt.Errorf("sqlite file %s is not a SQLite database: check the path", abs)
		}
	}
	v := url.Values{}
	switch opts.Mode {
	case ReadOnly:
		// mode=ro: SQLite itself refuses every write and never creates
		// the file. query_only: a second lock, kept even if mode were
		// lost. busy_timeout: wait, rather than fail, while a writer holds
		// a lock.
		v.Set("mode", "ro")
		v.Add("_pragma", "query_only(1)")
		v.Add("_pragma", "busy_timeout("+sqliteBusyTimeout+")")
	default:
		v.Set("mode", "rw")
		if opts.Mode == ReadWriteCreate {
			v.Set("mode", "rwc")
		}
		// immediate: a write transaction takes the write lock when it
		// begins, so two writers queue (busy_timeout) instead of one
		// failing halfway with SQLITE_BUSY.
		v.Set("_txlock", "immediate")
		v.Add("_pragma", "busy_timeout("+sqliteBusyTimeout+")")
		v.Add("_pragma", "foreign_keys(1)")
	}
	// As a URL, the path has its reserved characters (? # %) escaped.
	u := url.URL{Scheme: "file", Path: abs, RawQuery: v.Encode()}
	return Target{Dialect: SQLite, Conn: u.String()}, nil
}

// Open returns a connection pool on t for t's dialect. It does not
// connect: the first query, or a ping, does. Its errors may contain a
// secret; pass them through RedactError.
func (t Target) Open() (*sqlx.DB, error) {
	var c driver.Connector
	var err error
	switch t.Dialect {
	case Postgres:
		c, err = pq.NewConnector(t.Conn)
	case SQLite:
		c, err = sqlite.NewConnector(t.Conn)
	case MySQL:
		if t.MySQLConfig == nil {
			return nil, errors.New("no MySQL configuration")
		}
		c, err = mysql.NewConnector(t.MySQLConfig)
	default:
		return nil, fmt.Errorf("unknown dialect %d", int(t.Dialect))
	}
	if err != nil {
		return nil, err
	}
	return sqlx.NewDb(sql.OpenDB(c), t.Dialect.String()), nil
}

// WithDefaultParam returns the URL conn, a Target's PostgreSQL Conn, with the
// query parameter key set to value, unless conn sets it already.
func WithDefaultParam(conn, key, value string) (string, error) {
	u, err := url.Parse(conn)
	if err != nil {
		return "", errors.New("malformed PostgreSQL DSN")
	}
	q := u.Query()
	if q.Get(key) != "" {
		return conn, nil
	}
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// notExistError says a SQLite file does not exist; it is fs.ErrNotExist
// (errors.Is), for a caller that tells a missing file apart from a
// malformed DSN.
type notExistError string

func (e notExistError) Error() string { return string(e) }
func (e notExistError) Unwrap() error { return fs.ErrNotExist }

// Refused reports whether err is the database refusing a connection for a
// reason a retry cannot mend: PostgreSQL's class 28 (a wrong role or
// password) or 3D000 (no such database), a server without SSL for an
// sslmode that requires it, SQLite unable to open the file (a missing
// folder, no permission) or finding it is not a database, or MySQL
// refusing the user, password or database (mysqlRefused).
func Refused(err error) bool {
	if errors.Is(err, pq.ErrSSLNotSupported) {
		return true
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return pqErr.Code.Class() == "28" || pqErr.Code == "3D000"
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() & 0xff {
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_NOTADB:
			return true
		}
	}
	return mysqlRefused(err)
}
