package elido

// This file holds every detail of Elido's wire format that the client
// relies on: paths, query parameters, headers, JSON field names and how a
// response body becomes a value. Adapting to the published OpenAPI document
// should be a change to this file and its tests only.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
)

// DefaultBaseURL is Elido's production API, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.elido.app/v1"

// Endpoint names: the path below /workspaces/{workspace_id}/analytics/, and
// the keys of Client.Requests.
const (
	endpointSummary          = "summary"
	endpointTimeseries       = "timeseries"
	endpointLinkBreakdown    = "breakdown/link"
	endpointCountryBreakdown = "breakdown/country"
	endpointRecentClicks     = "clicks/recent"
)

// Query parameters and their fixed values.
const (
	paramFrom     = "from"
	paramTo       = "to"
	paramTZ       = "tz"
	paramInterval = "interval"
	paramLinkID   = "link_id"
	paramLimit    = "limit"
	paramCursor   = "cursor"

	intervalDay  = "day"
	intervalHour = "hour"

	// linkPageSize is the largest page breakdown/link serves.
	linkPageSize = 1000
	// clickPageSize is the page clicks/recent is asked for: the largest
	// limit the paginated endpoints document.
	clickPageSize = 1000
)

// Headers.
const (
	headerAuthorization  = "Authorization"
	headerUserAgent      = "User-Agent"
	headerAccept         = "Accept"
	headerRequestID      = "X-Request-ID"
	headerRetryAfter     = "Retry-After"
	headerRateLimitReset = "X-RateLimit-Reset"

	bearerPrefix = "Bearer " // Authorization: Bearer <key>
	mediaJSON    = "application/json"
	userAgent    = "clickrecon"
)

// endpointURL returns the URL of an analytics endpoint of workspace under
// base. The workspace id is opaque, so it is path-escaped, never trusted to
// be URL-safe.
func endpointURL(base *url.URL, workspaceID, endpoint string, q url.Values) *url.URL {
	u := *base
	u.Path = base.Path + "/workspaces/" + workspaceID + "/analytics/" + endpoint
	u.RawPath = base.EscapedPath() + "/workspaces/" + url.PathEscape(workspaceID) + "/analytics/" + endpoint
	u.RawQuery = q.Encode()
	return &u
}

// rangeQuery is the query every analytics endpoint takes: an inclusive range
// of calendar days in tz, optionally restricted to one link.
func rangeQuery(from, to reconcile.Date, tz, linkID string) url.Values {
	q := url.Values{}
	q.Set(paramFrom, from.String())
	q.Set(paramTo, to.String())
	q.Set(paramTZ, tz)
	if linkID != "" {
		q.Set(paramLinkID, linkID)
	}
	return q
}

func timeseriesQuery(from, to reconcile.Date, tz, linkID, interval string) url.Values {
	q := rangeQuery(from, to, tz, linkID)
	q.Set(paramInterval, interval)
	return q
}

func linkBreakdownQuery(from, to reconcile.Date, tz, cursor string) url.Values {
	q := rangeQuery(from, to, tz, "")
	q.Set(paramLimit, strconv.Itoa(linkPageSize))
	if cursor != "" {
		q.Set(paramCursor, cursor)
	}
	return q
}

func countryBreakdownQuery(from, to reconcile.Date, tz, cursor string) url.Values {
	q := rangeQuery(from, to, tz, "")
	if cursor != "" {
		q.Set(paramCursor, cursor)
	}
	return q
}

// recentClicksQuery is the query of clicks/recent: RFC 3339 instants (UTC,
// milliseconds), half-open [from, to), a page size and a cursor.
func recentClicksQuery(from, to time.Time, pageSize int, cursor string) url.Values {
	q := url.Values{}
	q.Set(paramFrom, from.UTC().Format(tsLayout))
	q.Set(paramTo, to.UTC().Format(tsLayout))
	q.Set(paramLimit, strconv.Itoa(pageSize))
	if cursor != "" {
		q.Set(paramCursor, cursor)
	}
	return q
}

// tsLayout is how the API writes instants: RFC 3339, UTC, milliseconds.
const tsLayout = "2006-01-02T15:04:05.000Z07:00"

// Response bodies. Every field is a pointer (or raw JSON) so that a field
// the contract requires but the body lacks, or sends as null, is told apart
// from a genuine zero: a misread must never become a count of 0. Fields the
// client does not know are ignored, as the API may add some.

type summaryBody struct {
	From         *reconcile.Date `json:"from"`
	To           *reconcile.Date `json:"to"`
	TZ           *string         `json:"tz"`
	Clicks       *int64          `json:"clicks"`
	UniqueClicks *int64          `json:"unique_clicks"`
}

// timeseriesBody is the answer to timeseries: T is dayItem for
// interval=day, hourItem for interval=hour.
type timeseriesBody[T any] struct {
	Interval *string `json:"interval"`
	TZ       *string `json:"tz"`
	Items    *[]T    `json:"items"`
}

type dayItem struct {
	Date   *reconcile.Date `json:"date"`
	Clicks *int64          `json:"clicks"`
}

// hourItem is an interval=hour item. Elido documents no shape for it;
// this project assumes {"ts": "2026-03-29T01:00:00.000Z", "clicks": 12}:
// one item per hour of the requested days in tz, oldest first, zero hours
// included, "ts" the RFC 3339 instant at which the hour starts (written in
// UTC). Hours start at the day's first instant in tz plus a whole number of
// hours, so a DST day has 23 or 25 items, and in a zone with a half-hour
// offset the hours start at :30 UTC.
type hourItem struct {
	TS     *time.Time `json:"ts"`
	Clicks *int64     `json:"clicks"`
}

type breakdownBody struct {
	Items      *[]breakdownItem `json:"items"`
	NextCursor *string          `json:"next_cursor"`
}

type breakdownItem struct {
	LinkID      opaqueID `json:"link_id"`
	CountryCode *string  `json:"country_code"`
	Clicks      *int64   `json:"clicks"`
}

type recentClicksBody struct {
	Items      *[]clickItem `json:"items"`
	NextCursor *string      `json:"next_cursor"`
}

// clickItem is one raw click. country_code is required but may be "", as
// in the country breakdown, for a click whose country Elido does not know.
type clickItem struct {
	TS          *time.Time `json:"ts"`
	LinkID      opaqueID   `json:"link_id"`
	CountryCode *string    `json:"country_code"`
}

// clickPage is one page of clicks/recent.
type clickPage struct {
	clicks     []Click
	nextCursor string // "" on the last page (null, absent or empty)
}

// decodeClicks reads a page of clicks/recent. Every field of every item is
// required: a click without its time, link or country cannot be put back.
func decodeClicks(data []byte) (clickPage, error) {
	var b recentClicksBody
	if err := json.Unmarshal(data, &b); err != nil {
		return clickPage{}, err
	}
	if b.Items == nil {
		return clickPage{}, missing("items")
	}
	p := clickPage{clicks: make([]Click, len(*b.Items))}
	for i, it := range *b.Items {
		if it.TS == nil {
			return clickPage{}, missing(fmt.Sprintf("items[%d].ts", i))
		}
		id, err := it.LinkID.get()
		if err != nil {
			return clickPage{}, fmt.Errorf("items[%d].link_id: %w", i, err)
		}
		if it.CountryCode == nil {
			return clickPage{}, missing(fmt.Sprintf("items[%d].country_code", i))
		}
		p.clicks[i] = Click{TS: it.TS.UTC(), LinkID: id, CountryCode: *it.CountryCode}
	}
	if b.NextCursor != nil {
		p.nextCursor = *b.NextCursor
	}
	return p, nil
}

// errorBody accepts both error shapes Elido sends (docs/elido.md):
//
//	{"error": "human-readable message", "code": "machine_code", "request_id": "req_…"}
//	{"error": "rate_limited", "message": "…", "retry_after_seconds": 12}
type errorBody struct {
	Error             *string  `json:"error"`
	Code              *string  `json:"code"`
	Message           *string  `json:"message"`
	RequestID         *string  `json:"request_id"`
	RetryAfterSeconds *float64 `json:"retry_after_seconds"`
}

// missing is the error for a required field that is absent or null.
func missing(field string) error {
	return fmt.Errorf("required field %q is absent or null", field)
}

func decodeSummary(data []byte) (Summary, error) {
	var b summaryBody
	if err := json.Unmarshal(data, &b); err != nil {
		return Summary{}, err
	}
	switch {
	case b.From == nil:
		return Summary{}, missing("from")
	case b.To == nil:
		return Summary{}, missing("to")
	case b.TZ == nil:
		return Summary{}, missing("tz")
	case b.Clicks == nil:
		return Summary{}, missing("clicks")
	case b.UniqueClicks == nil:
		return Summary{}, missing("unique_clicks")
	}
	return Summary{From: *b.From, To: *b.To, TZ: *b.TZ, Clicks: *b.Clicks, UniqueClicks: *b.UniqueClicks}, nil
}

// timeseriesHeader is what a timeseries answer says about itself.
type timeseriesHeader struct {
	interval, tz string
}

func decodeTimeseries[T any](data []byte) (timeseriesHeader, []T, error) {
	var b timeseriesBody[T]
	if err := json.Unmarshal(data, &b); err != nil {
		return timeseriesHeader{}, nil, err
	}
	switch {
	case b.Interval == nil:
		return timeseriesHeader{}, nil, missing("interval")
	case b.TZ == nil:
		return timeseriesHeader{}, nil, missing("tz")
	case b.Items == nil:
		return timeseriesHeader{}, nil, missing("items")
	}
	return timeseriesHeader{interval: *b.Interval, tz: *b.TZ}, *b.Items, nil
}

// decodeDays reads an interval=day answer.
func decodeDays(data []byte) (timeseriesHeader, []DayCount, error) {
	h, items, err := decodeTimeseries[dayItem](data)
	if err != nil {
		return h, nil, err
	}
	days := make([]DayCount, len(items))
	for i, it := range items {
		switch {
		case it.Date == nil:
			return h, nil, missing(fmt.Sprintf("items[%d].date", i))
		case it.Clicks == nil:
			return h, nil, missing(fmt.Sprintf("items[%d].clicks", i))
		}
		days[i] = DayCount{Date: *it.Date, Clicks: *it.Clicks}
	}
	return h, days, nil
}

// decodeHours reads an interval=hour answer (see hourItem).
func decodeHours(data []byte) (timeseriesHeader, []HourCount, error) {
	h, items, err := decodeTimeseries[hourItem](data)
	if err != nil {
		return h, nil, err
	}
	hours := make([]HourCount, len(items))
	for i, it := range items {
		switch {
		case it.TS == nil:
			return h, nil, missing(fmt.Sprintf("items[%d].ts", i))
		case it.Clicks == nil:
			return h, nil, missing(fmt.Sprintf("items[%d].clicks", i))
		}
		hours[i] = HourCount{Start: it.TS.UTC(), Clicks: *it.Clicks}
	}
	return h, hours, nil
}

// breakdownPage is one page of a breakdown, its items still raw.
type breakdownPage struct {
	items      []breakdownItem
	nextCursor string // "" on the last page (null, absent or empty)
}

func decodeBreakdown(data []byte) (breakdownPage, error) {
	var b breakdownBody
	if err := json.Unmarshal(data, &b); err != nil {
		return breakdownPage{}, err
	}
	if b.Items == nil {
		return breakdownPage{}, missing("items")
	}
	p := breakdownPage{items: *b.Items}
	if b.NextCursor != nil {
		p.nextCursor = *b.NextCursor
	}
	return p, nil
}

func (p breakdownPage) links() ([]LinkCount, error) {
	links := make([]LinkCount, len(p.items))
	for i, it := range p.items {
		id, err := it.LinkID.get()
		if err != nil {
			return nil, fmt.Errorf("items[%d].link_id: %w", i, err)
		}
		if it.Clicks == nil {
			return nil, missing(fmt.Sprintf("items[%d].clicks", i))
		}
		links[i] = LinkCount{LinkID: id, Clicks: *it.Clicks}
	}
	return links, nil
}

func (p breakdownPage) countries() ([]CountryCount, error) {
	countries := make([]CountryCount, len(p.items))
	for i, it := range p.items {
		switch {
		case it.CountryCode == nil:
			return nil, missing(fmt.Sprintf("items[%d].country_code", i))
		case it.Clicks == nil:
			return nil, missing(fmt.Sprintf("items[%d].clicks", i))
		}
		countries[i] = CountryCount{CountryCode: *it.CountryCode, Clicks: *it.Clicks}
	}
	return countries, nil
}

// opaqueID is a link id decoded where it stands in a page, once: a page
// of 1000 links is not held as raw JSON to be read a second time.
type opaqueID struct {
	id  string
	err error // why the value is not a link id
	set bool  // false: the field is absent
}

// UnmarshalJSON reads the id with linkID; encoding/json calls it for null
// too.
func (o *opaqueID) UnmarshalJSON(data []byte) error {
	o.set = true
	o.id, o.err = linkID(data)
	return nil
}

// get returns the id, or why there is none.
func (o opaqueID) get() (string, error) {
	if !o.set {
		return "", fmt.Errorf("absent or null")
	}
	return o.id, o.err
}

// linkID reads a link id, which is opaque: a JSON string, or a JSON number
// kept as its literal text (some workspaces have integer ids). It is never
// parsed as a number, so no id loses precision. A string without escapes
// (every id seen) is taken as it stands.
func linkID(raw []byte) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", fmt.Errorf("absent or null")
	}
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && plainString(raw[1:n-1]) {
		if n == 2 {
			return "", fmt.Errorf("empty")
		}
		return string(raw[1 : n-1]), nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		if s == "" {
			return "", fmt.Errorf("empty")
		}
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", fmt.Errorf("neither a string nor a number: %s", raw)
	}
	return n.String(), nil
}

// plainString reports whether s, the inside of a JSON string, needs no
// decoding: no escape, no control character, only valid UTF-8.
func plainString(s []byte) bool {
	for _, c := range s {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}

// apiErrorFields reads an error body of either shape. A body that is not
// JSON (a proxy's HTML page) yields its first bytes as the message.
func apiErrorFields(data []byte) (code, message, requestID string, retryAfter time.Duration, asked bool) {
	var b errorBody
	if err := json.Unmarshal(data, &b); err != nil {
		return "", snippet(data), "", 0, false
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if b.Message != nil {
		// {"error": "rate_limited", "message": "…"}: error is the code.
		code, message = str(b.Code), *b.Message
		if code == "" {
			code = str(b.Error)
		}
	} else {
		code, message = str(b.Code), str(b.Error)
	}
	if b.RetryAfterSeconds != nil && *b.RetryAfterSeconds >= 0 {
		retryAfter = longestWait
		if secs := *b.RetryAfterSeconds; secs < longestWait.Seconds() {
			retryAfter = time.Duration(secs * float64(time.Second))
		}
		asked = true
	}
	return code, message, str(b.RequestID), retryAfter, asked
}

// snippet is the start of a body that is not JSON, on one line.
func snippet(data []byte) string {
	const max = 120
	r := []rune(strings.ToValidUTF8(string(bytes.Join(bytes.Fields(data), []byte(" "))), "?"))
	if len(r) > max {
		return string(r[:max]) + "…"
	}
	return string(r)
}

// longestWait stands for a wait the server asks for that is too long for a
// Duration (Retry-After: 1e300): it must not wrap negative and retry at
// once. The client gives up on any wait this long.
const longestWait = 365 * 24 * time.Hour

// retryAfterHeader reads Retry-After, in seconds or as an HTTP date.
func retryAfterHeader(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(longestWait/time.Second) { // would wrap negative
			return longestWait, true
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// rateLimitResetHeader reads X-RateLimit-Reset, in Unix seconds. Some
// APIs send the seconds left instead: a value too small to be a time of
// this century is read that way, rather than as a reset long past that
// would retry at once.
func rateLimitResetHeader(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil || secs < 0 {
		return 0, false
	}
	if secs < 1_000_000_000 { // before 2001-09-09
		return time.Duration(secs) * time.Second, true
	}
	return max(time.Unix(secs, 0).Sub(now), 0), true
}
