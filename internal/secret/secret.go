// Package secret keeps secrets (passwords, tokens, URL paths that are
// credentials) out of error messages.
package secret

import (
	"slices"
	"strings"
)

// Redact returns s with every non-empty secret replaced by mask.
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
		if sec != "" {
			s = strings.ReplaceAll(s, sec, mask)
		}
	}
	return s
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

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }
