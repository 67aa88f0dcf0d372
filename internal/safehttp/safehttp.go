// Package safehttp holds the one redirect policy of every request
// clickrecon sends: to Elido, to Slack, to the monitoring endpoints and to
// the object store that holds the reports.
//
// Each of those requests carries a credential: Elido's API key in
// Authorization, Pushgateway basic auth, or a URL that is itself the
// secret (a Slack webhook, a healthcheck ping URL), or an object store's
// signature (AWS Signature V4, a bearer token). net/http, left to
// itself, follows redirects: it forwards Authorization to another port of
// the same host and from https to plain http, and it adds a Referer header
// that quotes the URL it came from. The policy here is therefore:
//
//   - A redirect to another origin (scheme, host or port differ) is never
//     followed. The request fails with a *RedirectError that names the
//     status and the origin it pointed to, never its path or query, which
//     may echo a secret. Nothing is sent to that origin at all, so no
//     credential, body or URL can reach it; there is no allow list to get
//     wrong. An operator who moves an endpoint updates the variable.
//   - A redirect within the origin is followed with its headers
//     (credentials included: the origin already holds them), at most
//     maxRedirects times, unless the caller refuses every redirect
//     (NoRedirects), as a Slack webhook post does: its 3xx means the
//     message was not posted.
//   - No request carries Referer, whatever it is.
package safehttp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects bounds the redirects followed within one origin.
const maxRedirects = 5

// Policy says which redirects a client follows.
type Policy int

const (
	// SameOrigin follows redirects within the origin of the first request
	// and refuses any other.
	SameOrigin Policy = iota
	// NoRedirects refuses every redirect: a 3xx is an error.
	NoRedirects
	// SameOriginSameMethod is SameOrigin for a client whose requests must
	// keep their method and body, as an object store's PUT: within the
	// origin it follows only 307 and 308, and hands any other 3xx back as
	// the answer (net/http would turn a PUT redirected by 301, 302 or 303
	// into a GET, whose 200 would read as a write done).
	SameOriginSameMethod
)

// ErrRedirect matches (with errors.Is) every redirect the policy refused.
var ErrRedirect = errors.New("redirect not followed")

// RedirectError is a redirect the policy refused.
type RedirectError struct {
	Status int    // the 3xx status
	From   string // the origin of the first request, scheme://host:port
	To     string // the origin of the Location, scheme://host:port
	// SameOrigin is true when To is From: refused by NoRedirects, or one
	// redirect too many.
	SameOrigin bool
	tooMany    bool
}

// Error names the status and the origins, never a path or a query.
func (e *RedirectError) Error() string {
	switch {
	case e.tooMany:
		return fmt.Sprintf("HTTP %d redirect not followed: more than %d redirects within %s", e.Status, maxRedirects, e.From)
	case e.SameOrigin:
		return fmt.Sprintf("HTTP %d redirect not followed: the server answered with a redirect (within %s) where a direct answer was expected", e.Status, e.From)
	}
	return fmt.Sprintf("HTTP %d redirect to another origin, %s, not followed: credentials never leave %s (point the URL at the final server)", e.Status, e.To, e.From)
}

// Is makes errors.Is(err, ErrRedirect) true.
func (e *RedirectError) Is(target error) bool { return target == ErrRedirect }

// Client returns a copy of c (a new client when c is nil) that follows
// policy and never sends Referer. Its Transport, Timeout and Jar are c's;
// any CheckRedirect of c is replaced.
func Client(c *http.Client, policy Policy) *http.Client {
	out := &http.Client{}
	if c != nil {
		*out = *c
	}
	out.CheckRedirect = CheckRedirect(policy)
	out.Transport = noReferer{out.Transport}
	return out
}

// noReferer removes Referer from every request, the first one included,
// so that no caller can add one by mistake.
type noReferer struct{ next http.RoundTripper }

func (t noReferer) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	if _, ok := req.Header["Referer"]; ok {
		req = req.Clone(req.Context()) // a RoundTripper must not change its request
		req.Header.Del("Referer")
	}
	return next.RoundTrip(req)
}

// CheckRedirect is policy as an http.Client.CheckRedirect function.
func CheckRedirect(policy Policy) func(req *http.Request, via []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		// net/http sets Referer on the new request just before calling
		// CheckRedirect: remove it first, whatever is decided below.
		req.Header.Del("Referer")
		if len(via) == 0 {
			return nil
		}
		e := &RedirectError{From: Origin(via[0].URL), To: Origin(req.URL)}
		if req.Response != nil {
			e.Status = req.Response.StatusCode
		}
		e.SameOrigin = e.From == e.To
		switch {
		case !e.SameOrigin, policy == NoRedirects:
			return e
		case len(via) > maxRedirects:
			e.tooMany = true
			return e
		case policy == SameOriginSameMethod && e.Status != http.StatusTemporaryRedirect && e.Status != http.StatusPermanentRedirect:
			return http.ErrUseLastResponse
		}
		return nil
	}
}

// Origin returns u's origin as scheme://host:port, the port made explicit
// (80 for http, 443 for https), without user info, path or query.
func Origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") { // an IPv6 literal
		host = "[" + host + "]"
	}
	return scheme + "://" + host + ":" + port
}
