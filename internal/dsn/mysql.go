package dsn

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// defaultMySQLTimeout bounds each connection attempt to MySQL when the DSN
// sets no timeout, as connect_timeout does for PostgreSQL.
const defaultMySQLTimeout = 10 * time.Second

// mysqlExample ends the messages about a malformed MySQL DSN.
const mysqlExample = "mysql://USER:PASSWORD@HOST:3306/DB?tls=true"

// mysqlParams are the query parameters a mysql:// DSN may set, each handed
// to the driver as it is written: how to reach and authenticate to the
// server, never what a session may do. Session variables (time_zone,
// sql_mode...) are refused: the store pins the ones a count depends on.
var mysqlParams = map[string]bool{
	"tls":                      true, // true, false, skip-verify or preferred
	"timeout":                  true, // dial timeout, such as 10s
	"readTimeout":              true,
	"writeTimeout":             true,
	"charset":                  true,
	"collation":                true,
	"compress":                 true,
	"connectionAttributes":     true,
	"maxAllowedPacket":         true,
	"allowNativePasswords":     true,
	"allowCleartextPasswords":  true, // only with tls=true or skip-verify
	"allowFallbackToPlaintext": true,
	"checkConnLiveness":        true,
	"rejectReadOnly":           true,
	// Refused when true (mysqlWidening), accepted as false.
	"multiStatements":   true,
	"allowAllFiles":     true,
	"interpolateParams": true,
}

// mysqlWidening are the driver parameters that widen what a connection may
// do, and why clickrecon refuses them.
var mysqlWidening = map[string]string{
	"multiStatements":   "it lets one statement carry others (a count query could end its transaction and write)",
	"allowAllFiles":     "it lets the server read any file of this machine (LOAD DATA LOCAL INFILE)",
	"interpolateParams": "clickrecon prepares every statement, so that the server parses exactly one",
}

// parseMySQL reads a mysql:// (or mariadb://) URL into the MySQL driver's
// configuration: mysql://USER:PASSWORD@HOST:PORT/DB?PARAMS, the port 3306
// when omitted, or mysql://USER:PASSWORD@localhost/DB?socket=/path for a
// Unix socket. Its errors never contain the password.
func parseMySQL(raw, name string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		// Neither err nor its inner error is shown: both can quote part of
		// the password.
		return Target{}, fmt.Errorf("malformed MySQL %s: it must be a URL such as %s, with the characters @ : / ? # %% in the user name and password percent-encoded", name, mysqlExample)
	}
	if misreadUserinfo(raw, u) {
		return Target{}, fmt.Errorf("malformed MySQL %s: its user name and password were not understood; percent-encode the characters @ : / ? # %% in them (# as %%23, / as %%2F, ? as %%3F, @ as %%40)", name)
	}
	t := Target{Dialect: MySQL}
	cfg := mysql.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		if pw, ok := u.User.Password(); ok && pw != "" {
			cfg.Passwd = pw
			t.Secrets = append(t.Secrets, pw, url.QueryEscape(pw), url.PathEscape(pw))
			if written := rawPassword(raw); written != "" {
				t.Secrets = append(t.Secrets, written)
			}
		}
	}
	if cfg.User == "" {
		return Target{}, fmt.Errorf("invalid MySQL %s: it names no user; use %s", name, mysqlExample)
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if cfg.DBName == "" || strings.Contains(cfg.DBName, "/") {
		return Target{}, fmt.Errorf("invalid MySQL %s: name one database after the host, as in %s", name, mysqlExample)
	}
	q := u.Query()
	if err := setMySQLAddr(cfg, u, q, name); err != nil {
		return Target{}, err
	}
	q.Del("socket")
	pass, err := mysqlPassThrough(q, name)
	if err != nil {
		return Target{}, err
	}
	// The driver reads the parameters it knows with its own rules (a
	// boolean, a duration), so a bad value fails here rather than at
	// every connection attempt.
	parsed, err := mysql.ParseDSN("/?" + pass.Encode())
	if err != nil {
		return Target{}, fmt.Errorf("invalid MySQL %s: %w", name, RedactError(err, t.Secrets))
	}
	parsed.User, parsed.Passwd, parsed.Net, parsed.Addr, parsed.DBName = cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName
	if !pass.Has("timeout") {
		parsed.Timeout = defaultMySQLTimeout
	}
	// The driver would print a lost connection's details to stderr; the
	// error it returns says what the caller needs, through its redaction.
	parsed.Logger = silent{}
	if parsed.AllowCleartextPasswords && (!encrypted(parsed.TLSConfig) || parsed.AllowFallbackToPlaintext) {
		return Target{}, fmt.Errorf("invalid MySQL %s: allowCleartextPasswords=true sends the password as it is: set tls=true (or skip-verify) and no allowFallbackToPlaintext, or drop it", name)
	}
	t.MySQLConfig = parsed
	t.Conn = parsed.FormatDSN()
	return t, nil
}

// silent is a MySQL driver logger that drops every line.
type silent struct{}

func (silent) Print(...any) {}

// encrypted reports whether the driver's tls setting always encrypts:
// preferred and false may not.
func encrypted(tlsConfig string) bool { return tlsConfig == "true" || tlsConfig == "skip-verify" }

// setMySQLAddr sets cfg's network and address from u's host and port, or
// from its socket parameter.
func setMySQLAddr(cfg *mysql.Config, u *url.URL, q url.Values, name string) error {
	if sock := q.Get("socket"); sock != "" {
		if !strings.HasPrefix(sock, "/") {
			return fmt.Errorf("invalid MySQL %s: socket=%s must be an absolute path", name, sock)
		}
		cfg.Net, cfg.Addr = "unix", sock
		return nil
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return fmt.Errorf("invalid MySQL %s: it names no host; use %s (or ?socket=/path/to/mysqld.sock)", name, mysqlExample)
	}
	if port == "" {
		port = "3306"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("invalid MySQL %s: port %s is not a port number (1 to 65535)", name, port)
	}
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, port)
	return nil
}

// mysqlPassThrough returns the parameters of q the driver may see. It
// refuses an unknown parameter, a session variable, a repeated one, and
// one that widens what a connection may do.
func mysqlPassThrough(q url.Values, name string) (url.Values, error) {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := url.Values{}
	for _, k := range keys {
		vs := q[k]
		if isSecretKey(k) && !mysqlParams[k] {
			return nil, fmt.Errorf("invalid MySQL %s: give the password in the URL's user part (mysql://USER:PASSWORD@HOST/DB), not as ?%s=", name, k)
		}
		if !mysqlParams[k] {
			return nil, fmt.Errorf("invalid MySQL %s: unknown or unsupported parameter %q; it may set only %s", name, k, knownMySQLParams())
		}
		if len(vs) != 1 {
			return nil, fmt.Errorf("invalid MySQL %s: parameter %s is given %d times", name, k, len(vs))
		}
		if why, widens := mysqlWidening[k]; widens {
			on, err := strconv.ParseBool(vs[0])
			if err != nil {
				return nil, fmt.Errorf("invalid MySQL %s: %s=%s is not true or false", name, k, vs[0])
			}
			if on {
				return nil, fmt.Errorf("invalid MySQL %s: %s=true is refused: %s; remove it", name, k, why)
			}
		}
		out.Set(k, vs[0])
	}
	return out, nil
}

// knownMySQLParams lists mysqlParams for an error message.
func knownMySQLParams() string {
	var ks []string
	for k := range mysqlParams {
		if _, widens := mysqlWidening[k]; !widens {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return strings.Join(append(ks, "socket"), ", ")
}

// mysqlRefused reports whether err is MySQL refusing a connection for a
// reason a retry cannot mend: access denied for the user or password (1045,
// 1698), or to the database (1044), no such database (1049), an
// authentication method the DSN does not allow, or TLS asked of a server
// without it.
func mysqlRefused(err error) bool {
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		switch myErr.Number {
		case 1044, 1045, 1049, 1698:
			return true
		}
		return false
	}
	return errors.Is(err, mysql.ErrNoTLS) || errors.Is(err, mysql.ErrCleartextPassword) ||
		errors.Is(err, mysql.ErrNativePassword) || errors.Is(err, mysql.ErrOldPassword) ||
		errors.Is(err, mysql.ErrUnknownPlugin)
}
