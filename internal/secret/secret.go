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
)

// Scrub returns err with every non-empty secret in its message replaced by
// mask. The result keeps err in its chain, for errors.Is and errors.As;
// it is err itself when the message holds no secret, and nil for nil.
func Scrub(err error, mask string, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	out := msg
	// Longest first: a short secret inside a longer one (a password's
	// first part) must not break the longer one's match.
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, s := range secrets {
		if s != "" {
			out = strings.ReplaceAll(out, s, mask)
		}
	}
	if out == msg {
		return err
	}
	return &scrubbed{msg: out, err: err}
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
			return nil, fmt.Errorf("%s_FILE: cannot read the secret file: %w", name, errors.Unwrap(err))
		}
		out[name] = strings.TrimRight(string(b), "\r\n")
	}
	return out, nil
}
