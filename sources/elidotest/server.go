// Package elidotest is a fake Elido analytics API: an HTTP server on the
// loopback interface that speaks the API of docs/elido.md, computed from
// a list of clicks, and that misbehaves on demand (rate limits, server
// errors, truncated or incomplete bodies, slow answers). Tests run the real
// client against it, and `clickrecon demo` runs the whole pipeline on it
// with no network.
package elidotest

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Click is one human click as Elido stores it.
type Click struct {
	TS          time.Time
	LinkID      string
	CountryCode string // ISO 3166-1 alpha-2, or "" where unknown
}

// rateLimitPerMinute is the budget the fake advertises in X-RateLimit-*
// headers (the Pro plan's); it does not enforce it.
const rateLimitPerMinute = 600

// Server is a running fake. It is safe for concurrent use: clicks and
// faults may be changed while requests are served.
type Server struct {
	srv         *httptest.Server
	workspaceID string
	apiKey      string
	done        chan struct{} // closed by Close, to end slow answers
	closeOnce   sync.Once

	mu          sync.Mutex
	clicks      []Click
	gen         int                    // counts SetClicks: whose clicks ranked holds
	ranked      map[spanKey][]linkJSON // a span's links, ranked: the pages of its breakdown
	daily       dailyTotals
	model       *model // SetModel
	faults      []Fault
	requests    map[string]int
	log         []string
	seq         int
	now         func() time.Time
	minute      time.Time // the rate limit window the fake advertises…
	minuteCount int       // … and the requests in it
	arrived     map[string]chan struct{}
	reach       time.Time // clicks/recent serves no click before it
}

// NewServer starts a fake serving clicks for one workspace, to clients that
// send apiKey as their bearer token. Close it when done.
func NewServer(workspaceID, apiKey string, clicks []Click) *Server {
	s := newServer(workspaceID, apiKey, clicks)
	s.srv = httptest.NewServer(s)
	return s
}

// Serve starts a fake, as NewServer does, listening on addr (host:port;
// port 0 picks a free one): `clickrecon demo --serve` runs it on its own
// so that a user can point a real run at it. Close it when done.
func Serve(addr, workspaceID, apiKey string, clicks []Click) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := newServer(workspaceID, apiKey, clicks)
	s.srv = httptest.NewUnstartedServer(s)
	s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	return s, nil
}

func newServer(workspaceID, apiKey string, clicks []Click) *Server {
	return &Server{
		workspaceID: workspaceID,
		apiKey:      apiKey,
		done:        make(chan struct{}),
		clicks:      slices.Clone(clicks),
		requests:    map[string]int{},
		now:         time.Now,
		arrived:     map[string]chan struct{}{},
	}
}

// URL returns the API's base URL, ending in /v1, as Elido's does.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close stops the server, cutting short any slow answer. Closing twice is
// harmless.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// SetClicks replaces the clicks the fake serves, as late data arriving
// between two runs would.
func (s *Server) SetClicks(clicks []Click) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clicks = slices.Clone(clicks)
	s.gen++
	s.ranked = nil
}

// dailyTotals are clicks known only by their day's count in one zone.
type dailyTotals struct {
	tz     string
	clicks map[string]int64 // by YYYY-MM-DD
}

// SetDailyTotals adds, on top of the clicks, clicks known only by their
// count per calendar day in tz (by YYYY-MM-DD): /summary and daily
// /timeseries asked in tz for the whole workspace count them, nothing else
// does. It serves a benchmark's millions of clicks without holding them;
// the days it drills into need their clicks. It replaces earlier totals.
func (s *Server) SetDailyTotals(tz string, totals map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.daily = dailyTotals{tz: tz, clicks: maps.Clone(totals)}
}

// in returns the day totals of the span's days, if they apply to it.
func (t dailyTotals) in(sp span) map[string]int64 {
	if t.clicks == nil || sp.tz != t.tz || sp.linkID != "" {
		return nil
	}
	out := map[string]int64{}
	for d := sp.from; !d.After(sp.to); d = d.AddDays(1) {
		if n, ok := t.clicks[d.String()]; ok {
			out[d.String()] = n
		}
	}
	return out
}

// SetFaults replaces the faults in force; SetFaults() ends them all. A
// request meets the first fault that applies to its endpoint and has times
// left.
func (s *Server) SetFaults(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = slices.Clone(faults)
}

// SetNow replaces the clock the fake reads for X-RateLimit-Reset, so that a
// client on a fake clock computes the waits a test expects.
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// Requests returns how many requests the fake has received per endpoint
// ("summary", "timeseries", "breakdown/link", …), failed ones included.
func (s *Server) Requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.requests)
}

// RequestLog returns the path and query of every request received, oldest
// first.
func (s *Server) RequestLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Arrived returns a channel that is closed once a request to endpoint
// ("breakdown/link", …) has arrived, before it is answered: a test can act
// on that event instead of guessing how long it takes.
func (s *Server) Arrived(endpoint string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.arrived[endpoint]
	if !ok {
		ch = make(chan struct{})
		s.arrived[endpoint] = ch
		if s.requests[endpoint] > 0 {
			close(ch)
		}
	}
	return ch
}

// request is what ServeHTTP reads under the lock, for one request.
type request struct {
	id       string
	endpoint string
	fault    Fault
	clicks   []Click
	gen      int // the generation of clicks
	daily    dailyTotals
	model    *model
	now      time.Time
	minute   time.Time
	count    int
	reach    time.Time
}

func (s *Server) begin(r *http.Request, endpoint string) request {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.requests[endpoint]++
	if ch, ok := s.arrived[endpoint]; ok && s.requests[endpoint] == 1 {
		close(ch) // registered before the first request: open until now
	}
	s.log = append(s.log, r.URL.RequestURI())
	now := s.now()
	if m := now.Truncate(time.Minute); !m.Equal(s.minute) {
		s.minute, s.minuteCount = m, 0
	}
	s.minuteCount++
	return request{
		id:       fmt.Sprintf("req_%06d", s.seq),
		endpoint: endpoint,
		fault:    s.takeFault(endpoint, r.URL.Query()),
		clicks:   s.clicks, // never modified in place: SetClicks replaces it
		gen:      s.gen,
		daily:    s.daily, // nor this: SetDailyTotals replaces it
		model:    s.model, // nor this: SetModel replaces it
		now:      now,
		minute:   s.minute,
		count:    s.minuteCount,
		reach:    s.reach,
	}
}

// takeFault returns the fault a request to endpoint meets, counting it
// down. The caller holds s.mu.
func (s *Server) takeFault(endpoint string, q url.Values) Fault {
	for i, f := range s.faults {
		if !f.appliesTo(endpoint, q) {
			continue
		}
		if f.Times > 0 {
			s.faults[i].Times--
			if s.faults[i].Times == 0 {
				s.faults = slices.Delete(s.faults, i, i+1)
			}
		}
		return f
	}
	return Fault{}
}

// ServeHTTP answers one request: authentication, workspace, faults, then
// the endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint, workspace, ok := splitPath(r.URL.EscapedPath())
	if !ok {
		endpoint = r.URL.Path
	}
	req := s.begin(r, endpoint)
	h := w.Header()
	h.Set("X-Request-ID", req.id)
	h.Set("X-RateLimit-Limit", strconv.Itoa(rateLimitPerMinute))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(rateLimitPerMinute-req.count, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(req.minute.Add(time.Minute).Unix(), 10))

	switch {
	case r.Header.Get("Authorization") != "Bearer "+s.apiKey:
		writeError(w, req, http.StatusUnauthorized, "unauthorized", "invalid or missing API key")
		return
	case r.Method != http.MethodGet:
		h.Set("Allow", http.MethodGet)
		writeError(w, req, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not supported")
		return
	case !ok || !knownEndpoint(endpoint):
		writeError(w, req, http.StatusNotFound, "not_found", "no such endpoint: "+r.URL.Path)
		return
	case workspace != s.workspaceID:
		writeError(w, req, http.StatusNotFound, "not_found", fmt.Sprintf("workspace %s not found", workspace))
		return
	}
	if s.failBefore(w, r, req) {
		return
	}
	body, err := s.answer(r.URL.Query(), req)
	if err != nil {
		writeError(w, req, http.StatusBadRequest, "invalid_parameter", err.Error())
		return
	}
	writeJSON(w, req, body)
}

// failBefore makes the faults that replace or delay the answer, and reports
// whether it answered.
func (s *Server) failBefore(w http.ResponseWriter, r *http.Request, req request) bool {
	f := req.fault
	h := w.Header()
	switch f.Kind {
	case Slow:
		t := time.NewTimer(f.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return true
		case <-s.done:
			return true
		}
	case RateLimited:
		h.Set("Retry-After", strconv.FormatInt(f.retryAfterSeconds(), 10))
		h.Set("X-RateLimit-Scope", "workspace")
		h.Set("X-RateLimit-Remaining", "0")
		writeError(w, req, http.StatusTooManyRequests, "rate_limited", "rate limit exceeded for this workspace")
		return true
	case RateLimitedBody:
		h.Del("X-RateLimit-Reset")
		h.Set("X-RateLimit-Scope", "workspace")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"error": "rate_limited", "message": "Too many requests, slow down", "retry_after_seconds": %d}`, f.retryAfterSeconds())
		return true
	case RateLimitedReset:
		reset := req.now.Add(time.Duration(f.retryAfterSeconds()) * time.Second)
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
		h.Set("X-RateLimit-Scope", "workspace")
		h.Set("X-RateLimit-Remaining", "0")
		writeError(w, req, http.StatusTooManyRequests, "rate_limited", "rate limit exceeded for this workspace")
		return true
	case ServerError:
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		if status == http.StatusBadGateway || status == http.StatusGatewayTimeout {
			// What a load balancer in front of the API sends.
			h.Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(status)
			fmt.Fprintf(w, "<html>\r\n<head><title>%d %s</title></head>\r\n<body><center><h1>%d %s</h1></center></body>\r\n</html>\r\n",
				status, http.StatusText(status), status, http.StatusText(status))
			return true
		}
		writeError(w, req, status, "internal_error", "the analytics backend failed: "+strings.ToLower(http.StatusText(status)))
		return true
	case Unauthorized:
		writeError(w, req, http.StatusUnauthorized, "unauthorized", "API key revoked")
		return true
	case Forbidden:
		writeError(w, req, http.StatusForbidden, "forbidden", "the API key lacks the analytics:read scope")
		return true
	case NotFound:
		writeError(w, req, http.StatusNotFound, "not_found", "not found")
		return true
	case Redirect:
		status := f.Status
		if status == 0 {
			status = http.StatusFound
		}
		target := f.Location + strings.TrimPrefix(r.URL.RequestURI(), "/v1")
		h.Set("Location", target)
		w.WriteHeader(status)
		return true
	case EchoAuthorization:
		status := f.Status
		if status == 0 {
			status = http.StatusServiceUnavailable
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "<html><body><h1>%d %s</h1><p>upstream said no; headers:</p><pre>Authorization: %s</pre></body></html>\n",
			status, http.StatusText(status), r.Header.Get("Authorization"))
		return true
	}
	return false
}

var endpoints = []string{
	endpointSummary, endpointTimeseries, endpointCountryBreakdown, endpointLinkBreakdown, endpointRecentClicks,
}

func knownEndpoint(e string) bool { return slices.Contains(endpoints, e) }

// splitPath reads /v1/workspaces/{workspace_id}/analytics/{endpoint} from an
// escaped path, unescaping the workspace id.
func splitPath(escaped string) (endpoint, workspace string, ok bool) {
	rest, ok := strings.CutPrefix(escaped, "/v1/workspaces/")
	if !ok {
		return "", "", false
	}
	ws, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return "", "", false
	}
	endpoint, ok = strings.CutPrefix(rest, "analytics/")
	if !ok {
		return "", "", false
	}
	workspace, err := url.PathUnescape(ws)
	if err != nil {
		return "", "", false
	}
	return endpoint, workspace, true
}
