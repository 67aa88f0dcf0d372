package elido

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ErrNotFound matches (with errors.Is) an APIError with status 404. A caller
// branches on it where an endpoint may not exist, as breakdown/link, whose
// link dimension Elido does not document (docs/elido.md).
var ErrNotFound = errors.New("elido: not found")

// APIError is an answer from Elido with an error status, after any retries.
// Its message says what to do about it; it never holds the API key.
type APIError struct {
	Endpoint  string // "summary", "timeseries", "breakdown/link", …
	Status    int    // the HTTP status
	Code      string // the API's machine code, if it sent one
	Message   string // the API's human-readable message, or the start of a non-JSON body
	RequestID string // X-Request-ID, or the body's request_id

	op       string // the operation, e.g. "GET timeseries 2026-11-26..2026-11-28"
	attempts int    // how many attempts were made, when more than one
	giveUp   string // why retrying stopped early, if it did
}

// NeedsFixing reports whether err is an answer of Elido's that only the
// configuration mends, which no retry changes: 401 (the API key), 403
// (its scope or workspace), 404 (the workspace or base URL).
func NeedsFixing(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		switch ae.Status {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			return true
		}
	}
	return false
}

// Error names the operation, the status, the API's message and request id,
// and ends with what to do.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("elido: ")
	if e.op != "" {
		b.WriteString(e.op)
	} else {
		b.WriteString(e.Endpoint)
	}
	fmt.Fprintf(&b, ": HTTP %d", e.Status)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %q", e.Message)
	}
	var notes []string
	if e.RequestID != "" {
		notes = append(notes, "request_id "+e.RequestID)
	}
	if e.attempts > 1 {
		notes = append(notes, fmt.Sprintf("gave up after %d attempts", e.attempts))
	}
	if e.giveUp != "" {
		notes = append(notes, e.giveUp)
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(notes, "; "))
	}
	if h := e.hint(); h != "" {
		b.WriteString(": ")
		b.WriteString(h)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound) true for a 404.
func (e *APIError) Is(target error) bool {
	return target == ErrNotFound && e.Status == http.StatusNotFound
}

// hint says what the operator should do about the status.
func (e *APIError) hint() string {
	switch s := e.Status; {
	case s == http.StatusUnauthorized:
		return "the API key is missing, revoked or expired: check ELIDO_API_KEY"
	case s == http.StatusForbidden:
		return "the API key lacks the analytics:read scope: create a key with analytics:read"
	case s == http.StatusNotFound:
		return "no such workspace or endpoint: check ELIDO_WORKSPACE_ID and ELIDO_API_BASE (it ends in /v1)"
	case s == http.StatusTooManyRequests:
		return "rate limited by Elido (other automation in the workspace shares the budget): lower ELIDO_RATE_LIMIT or run later"
	case s == http.StatusBadRequest || s == http.StatusUnprocessableEntity:
		return "Elido rejected the request: check the dates and time zone; if they are right, the API has changed and clickrecon needs a fix"
	case s >= 500:
		return "Elido is failing or unreachable: run again later"
	}
	return ""
}
