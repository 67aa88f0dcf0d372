// Package secret handles secrets (passwords, tokens, URL paths that are
// credentials): it reads them from mounted files and keeps them out of
// error messages and log lines.
package secret

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"unicode/utf8"
)

// MinFreeText is the length from which a secret is looked for anywhere in
// a text. A shorter one is removed only where it has a place (after
// "user:" and before "@" in a URL or DSN); the places Redact knows by
// their structure are removed whatever their length.
//
// Why 8: a short password is as likely to be a word, or part of one, as a
// secret ("x", "role", "admin"), and replacing it everywhere mangles the
// message (`pq: xxxxx "nc_nosuchuser" does not exist`). A database server
// does not echo the password it was given; what echoes one is a URL or a
// DSN quoted back (by a driver, net/http, a parse error), and those have a
// structure that is redacted as such. The secrets long enough to be told
// apart from words (API keys, tokens, a webhook's path, a password of 8
// characters or more) are also searched for in free text, where an error
// body may echo them.
const MinFreeText = 8

// Redact returns s with its secrets replaced by mask: the secrets of
// MinFreeText characters or more wherever they appear; shorter ones where
// they stand as a URL's or DSN's password; and, whether listed or not,
// whatever holds a secret by its place: a URL's or DSN's password (URL and
// key=value forms, and user:password@tcp(…)), a query parameter or field
// named for a secret (password, token, X-Amz-Signature, sig, api_key, …),
// an Authorization header, a Slack token or webhook path. No word that
// merely contains a short secret is changed.
//
// Redact whole texts, before cutting them to a snippet: a secret cut in
// two by the snippet's end no longer matches, and its first part would
// leak.
func Redact(s, mask string, secrets ...string) string {
	// Longest first: a short secret inside a longer one (a password's
	// first part) must not break the longer one's match.
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range secrets {
		if len(sec) >= MinFreeText {
			s = strings.ReplaceAll(s, sec, mask)
		}
	}
	// A known password first, exactly where it stands; then whatever
	// holds a secret by its place, known or not.
	for _, sec := range secrets {
		if sec != "" && len(sec) < MinFreeText {
			s = strings.ReplaceAll(s, ":"+sec+"@", ":"+mask+"@")
		}
	}
	return structural(s, mask)
}

// Scrub returns err with every non-empty secret in its message replaced by
// mask. The result keeps err in its chain, for errors.Is and errors.As;
// it is err itself when the message holds no secret, and nil for nil.
func Scrub(err error, mask string, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	out := Redact(msg, mask, secrets...)
	if out == msg {
		return err
	}
	return &scrubbed{msg: out, err: err}
}

// ScrubCut is Scrub, then the message cut to at most max bytes (at a
// character boundary, marked with "…"): redaction first, so that no secret
// is cut in two before it is looked for. Use it where an error quotes a
// response body of unknown length.
func ScrubCut(err error, max int, mask string, secrets ...string) error {
	err = Scrub(err, mask, secrets...)
	if err == nil || len(err.Error()) <= max {
		return err
	}
	return &scrubbed{msg: Cut(err.Error(), max), err: err}
}

// Cut returns s cut to at most max bytes, at a character boundary, ending
// in "…" when it was cut. Cut only text already redacted.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const more = "…"
	n := max - len(more)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n <= 0 {
		return more
	}
	return s[:n] + more
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// URL shows a URL that is not itself a secret (an API base, say) without
// the password or the query it might carry, or "(unparsable)".
func URL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable)"
	}
	u.RawQuery = ""
	return u.Redacted()
}

// Files reads NAME_FILE, for every NAME in names that is not set directly,
// and returns each file's content without its trailing line break, by NAME:
// the secrets a mounted Kubernetes Secret holds. Setting both NAME and
// NAME_FILE is an error: it is not clear which one wins.
func Files(lookup func(name string) (string, bool), names []string) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range names {
		path, ok := lookup(name + "_FILE")
		if !ok || path == "" {
			continue
		}
		if v, ok := lookup(name); ok && v != "" {
			return nil, fmt.Errorf("both %s and %s_FILE are set: unset one of them", name, name)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s_FILE=%s: cannot read the secret file: %w", name, path, errors.Unwrap(err))
		}
		out[name] = strings.TrimRight(string(b), "\r\n")
	}
	return out, nil
}
