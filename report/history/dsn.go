package history

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// dialect is the database behind a History.
type dialect int

const (
	dialectPostgres dialect = iota + 1
	dialectSQLite
)

// String returns the dialect's name, which is also its database/sql driver
// name and the folder of its SQL files.
func (d dialect) String() string {
	if d == dialectSQLite {
		return "sqlite"
	}
	return "postgres"
}

// defaultConnectTimeout bounds each connection attempt to PostgreSQL when
// the DSN sets none, so an unreachable history fails the run instead of
// hanging until its deadline.
const defaultConnectTimeout = "10"

// sqliteBusyTimeout is how long, in milliseconds, a write waits for another
// writer (a concurrent migrate, a shard of a backfill) before it fails.
const sqliteBusyTimeout = "10000"

const acceptedForms = "use postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=..., postgresql://... or sqlite:PATH"

// target is a parsed history DSN.
type target struct {
	dialect dialect
	conn    string   // the lib/pq URL or the SQLite file: URI
	secrets []string // strings that must never appear in an error
}

// parseDSN reads a history DSN. create allows a missing SQLite file to be
// created (Migrate); without it the file must exist (Open). Its errors
// never contain the password.
func parseDSN(dsn string, create bool) (target, error) {
	scheme, rest, _ := strings.Cut(dsn, ":")
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		return parsePostgres(dsn)
	case "sqlite":
		return parseSQLite(rest, create)
	}
	return target{}, fmt.Errorf("unsupported HISTORY_DSN: %s", acceptedForms)
}

func parsePostgres(dsn string) (target, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// err can quote part of the password: it is not shown.
		return target{}, errors.New("malformed PostgreSQL HISTORY_DSN: it must be a URL such as postgres://USER:PASSWORD@HOST:5432/DB?sslmode=require, with @ : / ? # % in the user name and password percent-encoded")
	}
	t := target{dialect: dialectPostgres}
	if pw, ok := u.User.Password(); ok && pw != "" {
		t.secrets = append(t.secrets, pw, url.QueryEscape(pw), url.PathEscape(pw))
	}
	q := u.Query()
	for k, vs := range q {
		if isSecretKey(k) {
			for _, v := range vs {
				if v != "" {
					t.secrets = append(t.secrets, v, url.QueryEscape(v))
				}
			}
		}
	}
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", defaultConnectTimeout)
		u.RawQuery = q.Encode()
	}
	t.conn = u.String()
	return t, nil
}

// parseSQLite reads the PATH of sqlite:PATH (sqlite:///abs/path too).
func parseSQLite(path string, create bool) (target, error) {
	path = strings.TrimPrefix(path, "//")
	if path == "" {
		return target{}, fmt.Errorf("sqlite HISTORY_DSN names no file: %s", acceptedForms)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return target{}, fmt.Errorf("sqlite history %s: %w", path, err)
	}
	mode := "rw"
	if create {
		mode = "rwc"
	} else if fi, err := os.Stat(abs); err != nil {
		return target{}, fmt.Errorf("sqlite history file %s: %w (run clickrecon migrate to create it)", abs, err)
	} else if fi.IsDir() {
		return target{}, fmt.Errorf("sqlite history %s is a directory, not a database file", abs)
	}
	v := url.Values{}
	v.Set("mode", mode)
	// immediate: a write transaction takes the write lock when it
	// begins, so two writers queue (busy_timeout) instead of one failing
	// halfway with SQLITE_BUSY.
	v.Set("_txlock", "immediate")
	v.Add("_pragma", "busy_timeout("+sqliteBusyTimeout+")")
	v.Add("_pragma", "foreign_keys(1)")
	u := url.URL{Scheme: "file", Path: abs, RawQuery: v.Encode()}
	return target{dialect: dialectSQLite, conn: u.String()}, nil
}

// redactDSN returns dsn fit for an error message: a URL's password, and
// any password query parameter, become xxxxx.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return "(unparsable DSN)"
	}
	if u.Opaque != "" { // sqlite:PATH holds no secret
		return dsn
	}
	q := u.Query()
	changed := false
	for k := range q {
		if isSecretKey(k) {
			q.Set(k, "xxxxx")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

func isSecretKey(k string) bool { return strings.Contains(strings.ToLower(k), "password") }

// redactError hides secrets in err's message while keeping err in the
// chain for errors.Is.
func redactError(err error, secrets []string) error {
	msg := err.Error()
	redacted := msg
	for _, s := range secrets {
		if s != "" {
			redacted = strings.ReplaceAll(redacted, s, "xxxxx")
		}
	}
	if redacted == msg {
		return err
	}
	return &redactedError{msg: redacted, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
