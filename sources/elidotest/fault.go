package elidotest

import (
	"net/url"
	"time"
)

// FaultKind is a way the fake misbehaves.
type FaultKind int

// The faults the fake can make. Each one is what a real API, or a proxy in
// front of it, does on a bad day.
const (
	// NoFault answers normally.
	NoFault FaultKind = iota

	// RateLimited answers 429 with Retry-After (RetryAfter, default 1s,
	// rounded up to whole seconds), X-RateLimit-Scope: workspace and the
	// usual error body {"error", "code", "request_id"}.
	RateLimited
	// RateLimitedBody answers 429 with no Retry-After and no
	// X-RateLimit-Reset, only the other body shape:
	// {"error": "rate_limited", "message", "retry_after_seconds"}.
	RateLimitedBody
	// RateLimitedReset answers 429 with no Retry-After: only
	// X-RateLimit-Reset, RetryAfter from the server's clock (see SetNow).
	RateLimitedReset

	// ServerError answers Status (500 by default; 502, 503 or 504). A 502 or
	// 504 comes as a gateway's HTML page, the others as a JSON error body.
	ServerError
	// Unauthorized answers 401, as for a key revoked during a run.
	Unauthorized
	// Forbidden answers 403: the key lacks the analytics:read scope.
	Forbidden
	// NotFound answers 404, as an API without the endpoint would; with
	// Endpoint "breakdown/link" it is the case docs/elido.md tells clients
	// to fall back from.
	NotFound

	// Slow waits Delay before answering normally (or until the client
	// gives up).
	Slow
	// Truncated answers 200 with the JSON body cut in half.
	Truncated
	// MissingField drops the JSON field Field from the answer and from each
	// of its items: "clicks", "date", "items", "next_cursor", …
	MissingField
	// NullField sends Field as null instead, in the answer and its items.
	NullField

	// SummaryOff adds Offset to summary's clicks, so that the summary and
	// the sum of the timeseries disagree. It applies to summary only.
	SummaryOff
	// MissingDay leaves the second item out of a timeseries (the first if
	// there is only one). It applies to timeseries only.
	MissingDay
	// DuplicateDay sends the first item of a timeseries twice. It applies
	// to timeseries only.
	DuplicateDay
	// RepeatCursor answers a page of breakdown/link asked for with a cursor
	// with that same cursor as next_cursor, so that a client that does not
	// guard against it pages for ever. It applies to breakdown/link only.
	RepeatCursor

	// Redirect answers Status (302 by default) with Location set to
	// Location followed by the request's path and query: a proxy, or an
	// attacker, sending the client elsewhere. A client must not carry its
	// key there.
	Redirect
	// EchoAuthorization answers Status (503 by default) with an HTML page
	// that quotes the request's Authorization header from about the 100th
	// character, across the 120 a snippet keeps, as some misconfigured
	// proxies do: a client must redact it from
	// the whole body before quoting any part of it.
	EchoAuthorization
	// ReversedDays sends the items of a timeseries newest first. It
	// applies to timeseries only.
	ReversedDays
	// HugeCount sets the first item of a timeseries to Count (the largest
	// int64 by default), so that the window's sums would wrap. It applies
	// to timeseries only.
	HugeCount
	// EndlessCursor answers every page of breakdown/link with a new
	// next_cursor, empty pages past the last link included: a client pages
	// for as long as it is let. It applies to breakdown/link only.
	EndlessCursor
	// RepeatAtPageBoundary starts a page of clicks/recent asked for with a
	// cursor with the click the page before ended with, again, in place of
	// the click that should come first: one click repeated, another lost,
	// and the span's count still right. It applies to the pages of
	// clicks/recent after the first.
	RepeatAtPageBoundary
)

// Fault is one misbehaviour of the fake, set with Server.SetFaults.
type Fault struct {
	Kind FaultKind

	// Endpoint restricts the fault to one endpoint: "summary",
	// "timeseries", "breakdown/link", "breakdown/country" or
	// "clicks/recent". Empty means every endpoint the kind applies to.
	Endpoint string
	// Times is how many matching requests the fault affects before it
	// clears itself; 0 means every one until the faults are set again.
	Times int
	// Date (YYYY-MM-DD) restricts the fault to requests whose from..to
	// range holds that day, so a fault can hit one day of a window.
	Date string

	Status     int           // ServerError: 500, 502, 503 or 504
	RetryAfter time.Duration // RateLimited*: the wait asked for
	Delay      time.Duration // Slow
	Field      string        // MissingField, NullField
	Offset     int64         // SummaryOff
	Location   string        // Redirect: where to, e.g. another server's URL + "/v1"
	Count      int64         // HugeCount; 0 means the largest int64
}

// appliesTo reports whether f concerns a request to endpoint with the
// query q.
func (f Fault) appliesTo(endpoint string, q url.Values) bool {
	if f.Endpoint != "" && f.Endpoint != endpoint {
		return false
	}
	if f.Date != "" && (q.Get("from") == "" || f.Date < q.Get("from") || f.Date > q.Get("to")) {
		return false // dates in YYYY-MM-DD order as strings do
	}
	switch f.Kind {
	case SummaryOff:
		return endpoint == endpointSummary
	case MissingDay, DuplicateDay, ReversedDays, HugeCount:
		return endpoint == endpointTimeseries
	case RepeatCursor, EndlessCursor:
		return endpoint == endpointLinkBreakdown
	case RepeatAtPageBoundary:
		return endpoint == endpointRecentClicks && q.Get("cursor") != ""
	}
	return true
}

// retryAfterSeconds is the wait f asks for, in the whole seconds the wire
// carries.
func (f Fault) retryAfterSeconds() int64 {
	d := f.RetryAfter
	if d <= 0 {
		d = time.Second
	}
	return int64((d + time.Second - 1) / time.Second)
}
