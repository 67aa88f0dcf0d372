package elidotest

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
)

// The endpoints, below /v1/workspaces/{workspace_id}/analytics/.
const (
	endpointSummary          = "summary"
	endpointTimeseries       = "timeseries"
	endpointCountryBreakdown = "breakdown/country"
	endpointLinkBreakdown    = "breakdown/link"
	endpointRecentClicks     = "clicks/recent"
)

const (
	defaultLimit = 100
	maxLimit     = 1000

	// tsLayout is how the API writes instants: RFC 3339, UTC, milliseconds.
	tsLayout = "2006-01-02T15:04:05.000Z07:00"
)

// The fake's own rendering of the contract. It is written apart from the
// client's, on purpose: a test then checks that the two read the contract
// the same way.

type summaryJSON struct {
	From         string `json:"from"`
	To           string `json:"to"`
	TZ           string `json:"tz"`
	Clicks       int64  `json:"clicks"`
	UniqueClicks int64  `json:"unique_clicks"`
}

type timeseriesJSON struct {
	Interval string `json:"interval"`
	TZ       string `json:"tz"`
	Items    []any  `json:"items"`
}

type dayJSON struct {
	Date   string `json:"date"`
	Clicks int64  `json:"clicks"`
}

// hourJSON is an interval=hour item, in the shape clickrecon assumes (see
// elido.HourlyTimeseries): the hour's first instant and its clicks.
type hourJSON struct {
	TS     string `json:"ts"`
	Clicks int64  `json:"clicks"`
}

type countryBreakdownJSON struct {
	Items []countryJSON `json:"items"`
}

type countryJSON struct {
	CountryCode string `json:"country_code"`
	Clicks      int64  `json:"clicks"`
}

type linkBreakdownJSON struct {
	Items      []linkJSON `json:"items"`
	NextCursor *string    `json:"next_cursor"`
}

type linkJSON struct {
	LinkID string `json:"link_id"`
	Clicks int64  `json:"clicks"`
}

type recentClicksJSON struct {
	Items      []clickJSON `json:"items"`
	NextCursor *string     `json:"next_cursor"`
}

type clickJSON struct {
	TS          string `json:"ts"`
	LinkID      string `json:"link_id"`
	CountryCode string `json:"country_code"`
}

type errorJSON struct {
	Error     string `json:"error"`
	Code      string `json:"code"`
	RequestID string `json:"request_id"`
}

// answer computes the body of a successful answer, or the reason the
// request is a bad one.
func (s *Server) answer(q url.Values, req request) (any, error) {
	if req.endpoint == endpointRecentClicks {
		return recentClicks(q, req)
	}
	sp, err := readSpan(q)
	if err != nil {
		return nil, err
	}
	if req.endpoint == endpointLinkBreakdown {
		return linkBreakdown(q, s.rankedLinks(sp, req), req.fault)
	}
	clicks := sp.filter(req.clicks)
	m := req.model.in(sp)
	switch req.endpoint {
	case endpointSummary:
		sum := summary(sp, clicks, req.fault)
		for _, n := range req.daily.in(sp) {
			sum.Clicks += n
		}
		if m != nil {
			for _, n := range m.dayClicks(sp) {
				sum.Clicks += n
			}
			sum.UniqueClicks += m.visitors(sp)
		}
		return sum, nil
	case endpointTimeseries:
		return timeseries(q, sp, clicks, req.daily.in(sp), m, req.fault)
	case endpointCountryBreakdown:
		return countryBreakdown(sp, clicks, m), nil
	}
	return nil, fmt.Errorf("no such endpoint %q", req.endpoint)
}

// span is the range of days a request asks for.
type span struct {
	from, to   reconcile.Date
	tz         string
	loc        *time.Location
	start, end time.Time // [start, end): from's first instant to the instant after to
	linkID     string
}

func readSpan(q url.Values) (span, error) {
	var sp span
	var err error
	for _, p := range []struct {
		name string
		d    *reconcile.Date
	}{{"from", &sp.from}, {"to", &sp.to}} {
		v := q.Get(p.name)
		if v == "" {
			return span{}, fmt.Errorf("%s is required (YYYY-MM-DD)", p.name)
		}
		if *p.d, err = reconcile.ParseDate(v); err != nil {
			return span{}, fmt.Errorf("%s: %v", p.name, err)
		}
	}
	sp.tz = q.Get("tz")
	if sp.tz == "" {
		sp.tz = "UTC"
	}
	if sp.tz == "Local" {
		return span{}, fmt.Errorf("unknown time zone %q", sp.tz)
	}
	if sp.loc, err = time.LoadLocation(sp.tz); err != nil {
		return span{}, fmt.Errorf("unknown time zone %q", sp.tz)
	}
	if sp.from.After(sp.to) {
		return span{}, fmt.Errorf("from %s is after to %s", sp.from, sp.to)
	}
	sp.start, sp.end = sp.from.Start(sp.loc), sp.to.AddDays(1).Start(sp.loc)
	sp.linkID = q.Get("link_id")
	return sp, nil
}

// filter returns the clicks within the span, of its link if it has one.
// A click is on the calendar date its timestamp has in the zone: the fake
// finds days its own way, not through reconcile.Date.Bounds, so that the
// tests of clickrecon's day boundaries check them against something else.
//
// The date is compared as a number (20261128), not formatted: a
// benchmark's fake holds 600k clicks, and formatting each for every
// request made the fake, not the client, set a run's time.
func (sp span) filter(clicks []Click) []Click {
	number := func(y int, m time.Month, d int) int { return y*10000 + int(m)*100 + d }
	from, to := number(sp.from.Year, sp.from.Month, sp.from.Day), number(sp.to.Year, sp.to.Month, sp.to.Day)
	var in []Click
	for _, c := range clicks {
		if day := number(c.TS.In(sp.loc).Date()); day < from || day > to {
			continue
		}
		if sp.linkID != "" && c.LinkID != sp.linkID {
			continue
		}
		in = append(in, c)
	}
	return in
}

func summary(sp span, clicks []Click, f Fault) summaryJSON {
	// The fake knows no visitors: a click is unique when it is the first
	// of the range with its link and country.
	type visitor struct{ link, country string }
	unique := map[visitor]bool{}
	for _, c := range clicks {
		unique[visitor{c.LinkID, c.CountryCode}] = true
	}
	s := summaryJSON{
		From:         sp.from.String(),
		To:           sp.to.String(),
		TZ:           sp.tz,
		Clicks:       int64(len(clicks)),
		UniqueClicks: int64(len(unique)),
	}
	if f.Kind == SummaryOff {
		s.Clicks += f.Offset
	}
	return s
}

func timeseries(q url.Values, sp span, clicks []Click, daily map[string]int64, m *model, f Fault) (timeseriesJSON, error) {
	interval := q.Get("interval")
	if interval == "" {
		interval = "day"
	}
	var items []any
	switch interval {
	case "day":
		counts := maps.Clone(daily)
		if counts == nil {
			counts = map[string]int64{}
		}
		for _, c := range clicks {
			counts[c.TS.In(sp.loc).Format("2006-01-02")]++
		}
		if m != nil {
			for d, n := range m.dayClicks(sp) {
				counts[d] += n
			}
		}
		for d := sp.from; !d.After(sp.to); d = d.AddDays(1) {
			items = append(items, dayJSON{Date: d.String(), Clicks: counts[d.String()]})
		}
	case "hour":
		n := int((sp.end.Sub(sp.start) + time.Hour - 1) / time.Hour)
		counts := make([]int64, n)
		for _, c := range clicks {
			counts[c.TS.Sub(sp.start)/time.Hour]++
		}
		if m != nil {
			m.each(sp, func(d reconcile.Date, i int, n int64) { counts[m.hourOf(d, i).Sub(sp.start)/time.Hour] += n })
		}
		for i, n := range counts {
			start := sp.start.Add(time.Duration(i) * time.Hour)
			items = append(items, hourJSON{TS: start.UTC().Format(tsLayout), Clicks: n})
		}
	default:
		return timeseriesJSON{}, fmt.Errorf("interval must be day or hour, got %q", interval)
	}
	switch {
	case f.Kind == MissingDay && len(items) > 1:
		items = slices.Delete(items, 1, 2)
	case f.Kind == MissingDay:
		items = items[:0]
	case f.Kind == DuplicateDay:
		items = slices.Insert(items, 0, items[0])
	case f.Kind == ReversedDays:
		slices.Reverse(items)
	case f.Kind == HugeCount && len(items) > 0:
		n := f.Count
		if n == 0 {
			n = math.MaxInt64
		}
		switch it := items[0].(type) {
		case dayJSON:
			it.Clicks = n
			items[0] = it
		case hourJSON:
			it.Clicks = n
			items[0] = it
		}
	}
	return timeseriesJSON{Interval: interval, TZ: sp.tz, Items: items}, nil
}

func countryBreakdown(sp span, clicks []Click, m *model) countryBreakdownJSON {
	counts := map[string]int64{}
	for _, c := range clicks {
		counts[c.CountryCode]++
	}
	if m != nil {
		m.each(sp, func(_ reconcile.Date, i int, n int64) { counts[modelCountries[i%len(modelCountries)]] += n })
	}
	items := []countryJSON{}
	for code, n := range counts {
		items = append(items, countryJSON{CountryCode: code, Clicks: n})
	}
	slices.SortFunc(items, func(a, b countryJSON) int {
		return cmp.Or(cmp.Compare(b.Clicks, a.Clicks), cmp.Compare(a.CountryCode, b.CountryCode))
	})
	return countryBreakdownJSON{Items: items}
}

// spanKey names a span's days, zone and link, for the rankings kept.
type spanKey struct{ from, to, tz, linkID string }

// rankedLinks returns the span's links, highest first and then by id. A
// breakdown is read a page at a time, so the ranking of the request's
// clicks is kept until SetClicks replaces them: ranking a benchmark's
// day of 100k links again for each of its 100 pages would make the fake,
// not the client, set the time of a run. The slice is shared: never
// modified.
func (s *Server) rankedLinks(sp span, req request) []linkJSON {
	key := spanKey{sp.from.String(), sp.to.String(), sp.tz, sp.linkID}
	s.mu.Lock()
	all, ok := s.ranked[key] // ranked holds generation s.gen only
	fresh := ok && req.gen == s.gen
	s.mu.Unlock()
	if fresh {
		return all
	}
	counts := map[string]int64{}
	for _, c := range sp.filter(req.clicks) {
		counts[c.LinkID]++
	}
	if m := req.model.in(sp); m != nil {
		m.each(sp, func(_ reconcile.Date, i int, n int64) { counts[m.Links[i]] += n })
	}
	all = make([]linkJSON, 0, len(counts))
	for id, n := range counts {
		all = append(all, linkJSON{LinkID: id, Clicks: n})
	}
	slices.SortFunc(all, func(a, b linkJSON) int {
		return cmp.Or(cmp.Compare(b.Clicks, a.Clicks), cmp.Compare(a.LinkID, b.LinkID))
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.gen == s.gen { // not if SetClicks came in meanwhile
		if s.ranked == nil {
			s.ranked = map[spanKey][]linkJSON{}
		}
		s.ranked[key] = all
	}
	return all
}

// linkBreakdown serves one page of the ranked links. Its cursor is opaque
// to clients; inside it is an offset.
func linkBreakdown(q url.Values, all []linkJSON, f Fault) (linkBreakdownJSON, error) {
	limit, err := readLimit(q)
	if err != nil {
		return linkBreakdownJSON{}, err
	}
	cursor := q.Get("cursor")
	offset := 0
	if cursor != "" {
		if offset, err = decodeOffset(cursor); err != nil {
			return linkBreakdownJSON{}, err
		}
	}
	page := linkBreakdownJSON{Items: all[min(offset, len(all)):min(offset+limit, len(all))]}
	if offset+limit < len(all) {
		next := encodeOffset(offset + limit)
		page.NextCursor = &next
	}
	if f.Kind == RepeatCursor && cursor != "" {
		page.NextCursor = &cursor
	}
	if f.Kind == EndlessCursor {
		next := encodeOffset(offset + limit)
		page.NextCursor = &next
	}
	return page, nil
}

func encodeOffset(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(n)))
}

func decodeOffset(cursor string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err == nil {
		if v, ok := strings.CutPrefix(string(b), "offset:"); ok {
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	return 0, errors.New("invalid cursor")
}

// recentClicks serves raw clicks newest first. Its cursor names the last
// click served (time and place in the click list), so that a page asked for
// later starts after it even if newer clicks have come in meanwhile.
func recentClicks(q url.Values, req request) (recentClicksJSON, error) {
	limit, err := readLimit(q)
	if err != nil {
		return recentClicksJSON{}, err
	}
	var from, to time.Time
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"from", &from}, {"to", &to}} {
		if v := q.Get(p.name); v != "" {
			if *p.t, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return recentClicksJSON{}, fmt.Errorf("%s must be an RFC 3339 instant, got %q", p.name, v)
			}
		}
	}
	type row struct {
		click Click
		index int
	}
	newer := func(a, b row) bool { // a comes before b, newest first
		if !a.click.TS.Equal(b.click.TS) {
			return a.click.TS.After(b.click.TS)
		}
		return a.index > b.index
	}
	linkID := q.Get("link_id")
	var rows []row
	for i, c := range req.clicks {
		if (!from.IsZero() && c.TS.Before(from)) || (!to.IsZero() && !c.TS.Before(to)) {
			continue
		}
		if linkID != "" && c.LinkID != linkID {
			continue
		}
		if !req.reach.IsZero() && c.TS.Before(req.reach) {
			continue // beyond the endpoint's reach
		}
		rows = append(rows, row{c, i})
	}
	slices.SortFunc(rows, func(a, b row) int {
		switch {
		case newer(a, b):
			return -1
		case newer(b, a):
			return 1
		}
		return 0
	})
	if cursor := q.Get("cursor"); cursor != "" {
		ts, index, err := decodeClickCursor(cursor)
		if err != nil {
			return recentClicksJSON{}, err
		}
		last := row{Click{TS: ts}, index}
		next := sort.Search(len(rows), func(i int) bool { return newer(last, rows[i]) })
		if req.fault.Kind == RepeatAtPageBoundary && next > 0 && next < len(rows) {
			// The last click served again in place of the next one.
			rows = append([]row{rows[next-1]}, rows[next+1:]...)
		} else {
			rows = rows[next:]
		}
	}
	page := recentClicksJSON{Items: []clickJSON{}}
	for _, r := range rows[:min(limit, len(rows))] {
		page.Items = append(page.Items, clickJSON{TS: r.click.TS.UTC().Format(tsLayout), LinkID: r.click.LinkID, CountryCode: r.click.CountryCode})
	}
	if len(rows) > limit {
		last := rows[limit-1]
		next := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d:%d", last.click.TS.UnixNano(), last.index))
		page.NextCursor = &next
	}
	return page, nil
}

func decodeClickCursor(cursor string) (time.Time, int, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err == nil {
		ts, index, ok := strings.Cut(string(b), ":")
		if ok {
			nanos, err1 := strconv.ParseInt(ts, 10, 64)
			i, err2 := strconv.Atoi(index)
			if err1 == nil && err2 == nil {
				return time.Unix(0, nanos), i, nil
			}
		}
	}
	return time.Time{}, 0, errors.New("invalid cursor")
}

func readLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return defaultLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxLimit {
		return 0, fmt.Errorf("limit must be from 1 to %d, got %q", maxLimit, v)
	}
	return n, nil
}

// writeJSON writes a 200 answer, spoilt by the request's fault if it spoils
// bodies.
func writeJSON(w http.ResponseWriter, req request, body any) {
	data, err := json.Marshal(body)
	if err != nil {
		writeError(w, req, http.StatusInternalServerError, "internal_error", "encoding the answer: "+err.Error())
		return
	}
	switch f := req.fault; f.Kind {
	case MissingField, NullField:
		data = alterField(data, f.Field, f.Kind == NullField)
	case Truncated:
		data = data[:len(data)/2]
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}

// alterField drops field from a JSON object and from each of its items, or
// sets it to null there.
func alterField(data []byte, field string, null bool) []byte {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // counts stay exact
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return data
	}
	alter := func(m map[string]any) {
		if _, ok := m[field]; !ok {
			return
		}
		if null {
			m[field] = nil
		} else {
			delete(m, field)
		}
	}
	if items, ok := top["items"].([]any); ok {
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				alter(m)
			}
		}
	}
	alter(top)
	out, err := json.Marshal(top)
	if err != nil {
		return data
	}
	return out
}

func writeError(w http.ResponseWriter, req request, status int, code, message string) {
	data, _ := json.Marshal(errorJSON{Error: message, Code: code, RequestID: req.id})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}
