package dsn

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/clickrecon/clickrecon/internal/secret"
)

// Redact returns raw with its password replaced by "xxxxx", so that it can
// appear in logs and errors. It handles URLs (postgres://user:pw@host,
// mysql://user:pw@host, also ?password=), key=value strings (password=pw)
// and the MySQL driver's own form (user:pw@tcp(host:3306)/db, which
// clickrecon refuses but a user may still write); a DSN it cannot parse
// keeps nothing between "://" and the last "@".
func Redact(raw string) string {
	if mysqlDriverForm.MatchString(raw) {
		return mysqlDriverForm.ReplaceAllString(raw, "${1}:xxxxx@${2}")
	}
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Opaque == "" && !misreadUserinfo(raw, u) {
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
	if i := strings.Index(raw, "://"); i >= 0 {
		if at := strings.LastIndex(raw, "@"); at > i {
			raw = raw[:i+3] + "xxxxx" + raw[at:]
		}
	}
	return keyValuePassword.ReplaceAllString(raw, "${1}xxxxx")
}

// misreadUserinfo reports whether url.Parse read raw differently from
// what its author meant: an unencoded #, / or ? in the password ends the
// user:password part early. postgres://u:1234#x@host parses as host
// "u:1234" and a fragment; postgres://u:p@ss#1@host as password "p", host
// "ss" and a fragment. A PostgreSQL DSN has no use for a fragment, nor for
// an @ in its path or in a query key, so any of these means a misread
// (an @ in a query value, as in ?user=recon@server, is fine).
func misreadUserinfo(raw string, u *url.URL) bool {
	if !strings.Contains(raw, "://") {
		return false
	}
	if u.Fragment != "" || strings.Contains(raw, "#") || strings.Contains(u.Path, "@") {
		return true
	}
	for k := range u.Query() {
		if strings.Contains(k, "@") {
			return true
		}
	}
	return false
}

// keyValuePassword matches password=... (and sslpassword=...) in a
// key=value DSN or a query string, quoted or not.
var keyValuePassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`)

// mysqlDriverForm matches the user and password of a DSN in the MySQL
// driver's form, user:password@tcp(...) or @unix(...).
var mysqlDriverForm = regexp.MustCompile(`^([^:/@\s]*):.*@((?:tcp|tcp6|unix)\()`)

func isSecretKey(k string) bool { return strings.Contains(strings.ToLower(k), "password") }

// rawPassword returns the password as written in a URL DSN, before
// percent-decoding.
func rawPassword(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
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

// RedactError hides secrets (a Target's Secrets) in err's message while
// keeping err in the chain for errors.Is and errors.As. It returns err
// itself when its message holds none of them.
func RedactError(err error, secrets []string) error {
	return secret.Scrub(err, "xxxxx", secrets...)
}
