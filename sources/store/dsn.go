package store

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// dialect is the database behind a Store.
type dialect int

const (
	dialectPostgres dialect = iota + 1
	dialectSQLite
)

// String returns the dialect's name, which is also its database/sql driver
// name (sqlx picks the bindvar style from it).
func (d dialect) String() string {
	if d == dialectSQLite {
		return "sqlite"
	}
	return "postgres"
}

// defaultConnectTimeout bounds each connection attempt to PostgreSQL when
// the DSN sets no connect_timeout, so an unreachable store fails the run
// instead of hanging until its deadline.
const defaultConnectTimeout = "10"

// acceptedForms ends the message about a DSN that is none of them.
const acceptedForms = "use postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=..., postgresql://... or sqlite:PATH"

// target is a parsed store DSN: the dialect and what to hand its driver.
type target struct {
	dialect dialect
	// conn is the lib/pq connection URL, or the SQLite file: URI.
	conn string
	// secrets are strings that must never appear in an error: the
	// password, raw and as written in the DSN.
	secrets []string
}

// parseDSN reads a store DSN. Its errors never contain the password.
func parseDSN(dsn string) (target, error) {
	scheme, _, _ := strings.Cut(dsn, ":")
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		return parsePostgres(dsn)
	case "sqlite":
		return parseSQLite(dsn[len("sqlite:"):])
	}
	if strings.Contains(dsn, "://") && isScheme(scheme) {
		return target{}, fmt.Errorf("unsupported store DSN scheme %q: %s", scheme, acceptedForms)
	}
	return target{}, fmt.Errorf("unsupported store DSN: %s", acceptedForms)
}

func parsePostgres(dsn string) (target, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// Neither err nor its inner error is shown: both can quote part of
		// the password (an unescaped '#' turns it into a "port").
		return target{}, errors.New("malformed PostgreSQL DSN: it must be a URL such as postgres://USER:PASSWORD@HOST:5432/DB?sslmode=require, with the characters @ : / ? # % in the user name and password percent-encoded")
	}
	t := target{dialect: dialectPostgres}
	if pw, ok := u.User.Password(); ok && pw != "" {
		t.secrets = append(t.secrets, pw, url.QueryEscape(pw), url.PathEscape(pw))
		if raw := rawPassword(dsn); raw != "" {
			t.secrets = append(t.secrets, raw)
		}
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

// parseSQLite reads the PATH of sqlite:PATH (sqlite:///abs/path is accepted
// too) and checks that the file exists: the store is opened read-only and
// never created.
func parseSQLite(path string) (target, error) {
	if strings.HasPrefix(path, "//") {
		path = path[2:]
	}
	if path == "" {
		return target{}, fmt.Errorf("sqlite store DSN names no file: %s", acceptedForms)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return target{}, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return target{}, fmt.Errorf("sqlite store file %s does not exist (it is opened read-only, never created: check the path)", abs)
	case err != nil:
		return target{}, fmt.Errorf("sqlite store file %s: %w", abs, err)
	case fi.IsDir():
		return target{}, fmt.Errorf("sqlite store %s is a directory, not a database file", abs)
	}
	// mode=ro: SQLite itself refuses every write and never creates the
	// file. query_only: a second lock, kept even if mode were lost.
	// busy_timeout: wait, rather than fail, while a writer holds a lock.
	v := url.Values{}
	v.Set("mode", "ro")
	v.Add("_pragma", "query_only(1)")
	v.Add("_pragma", "busy_timeout(10000)")
	// As a URL, the path has its reserved characters (? # %) escaped.
	u := url.URL{Scheme: "file", Path: abs, RawQuery: v.Encode()}
	return target{dialect: dialectSQLite, conn: u.String()}, nil
}

// RedactDSN returns dsn with its password replaced by "xxxxx", so that it
// can appear in logs and errors. It handles URLs (postgres://user:pw@host,
// also ?password=) and key=value strings (password=pw); a DSN it cannot
// parse keeps nothing between "://" and the last "@".
func RedactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" && u.Opaque == "" {
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
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			dsn = dsn[:i+3] + "xxxxx" + dsn[at:]
		}
	}
	return keyValuePassword.ReplaceAllString(dsn, "${1}xxxxx")
}

// keyValuePassword matches password=... (and sslpassword=...) in a
// key=value DSN or a query string, quoted or not.
var keyValuePassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`)

func isSecretKey(k string) bool { return strings.Contains(strings.ToLower(k), "password") }

// rawPassword returns the password as written in a URL DSN, before
// percent-decoding.
func rawPassword(dsn string) string {
	_, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return ""
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pw, ok := strings.Cut(rest[:at], ":")
	if !ok {
		return ""
	}
	return pw
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

// redactError hides secrets in err's message while keeping err in the
// chain for errors.Is and errors.As.
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
