// Package elido is clickrecon's client for Elido's click analytics API
// (see docs/elido.md): summary, daily and hourly timeseries and the link and
// country breakdowns of one workspace.
//
// The client is strict. A response that lacks a field the contract
// requires, or that does not hold exactly the days asked for, is an error,
// never a zero: the caller turns errors into unverifiable days, while a
// misread zero would become a false gap. It paces itself under a client-side
// rate limit, retries what may succeed on a second try (429, 5xx, network
// errors) within the caller's deadline, and keeps the API key out of every
// error, log line and String output.
package elido

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"golang.org/x/time/rate"

	"github.com/clickrecon/clickrecon/internal/backoff"
	"github.com/clickrecon/clickrecon/internal/safehttp"
	"github.com/clickrecon/clickrecon/internal/secret"
)

const (
	defaultRatePerMinute  = 60 // the smallest plan's budget
	defaultRequestTimeout = 30 * time.Second
	defaultMaxAttempts    = 5

	// limiterBurst is small on purpose: the workspace's budget is shared
	// with other automation, so the client spreads its requests evenly.
	limiterBurst = 1

	// maxMalformedRetries is how often a 2xx body that is not JSON or is cut
	// short is retried. Such a body is usually a proxy's fault or a dropped
	// connection, which a second try fixes; twice in a row it is not
	// transient. A well-formed body that breaks the contract (a missing
	// field, a missing day) is never retried: the API would say it again.
	maxMalformedRetries = 1

	maxBodyBytes      = 32 << 20 // a 2xx answer
	maxErrorBodyBytes = 64 << 10 // an error answer: only its message matters
)

// elidoRetry is how a request to Elido is retried (New sets Attempts from
// Config.MaxAttempts, Sleep from the client's clock):
//
//   - 429: Elido did not act on it. Wait what it asks (Retry-After, else
//     X-RateLimit-Reset, else the body's retry_after_seconds), up to 15
//     minutes: a longer wait, or a misread reset time, gives up instead of
//     hanging a run that has no deadline. Without such a request, back off.
//   - 500, 502, 503, 504, a timeout of one attempt or a failed connection:
//     every request is a GET, so a repeat is harmless. Back off a random
//     time up to 500 ms·2ⁿ⁻¹ (full jitter), at most 30 s.
//
// A 2xx body that is not JSON or is cut short is retried too, at most
// maxMalformedRetries times, under the same attempts and waits.
var elidoRetry = backoff.Policy{
	Attempts:      defaultMaxAttempts,
	Wait:          500 * time.Millisecond,
	Doubling:      true,
	MaxWait:       30 * time.Second,
	Jitter:        backoff.FullJitter,
	MaxRetryAfter: 15 * time.Minute,
	RateLimited:   true,
	Unsure:        []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout},
	RepeatUnsure:  true,
}

// Config is what New needs to reach one workspace.
type Config struct {
	BaseURL        string        // default DefaultBaseURL
	APIKey         string        // workspace-scoped, with the analytics:read scope
	WorkspaceID    string        // opaque
	RatePerMinute  int           // requests per minute the client allows itself; default 60
	RequestTimeout time.Duration // per attempt; default 30s
	MaxAttempts    int           // per request, the first included; default 5
	HTTPClient     *http.Client  // default: a new http.Client; its CheckRedirect is replaced (see New)
	Logger         *slog.Logger  // debug lines per attempt; nil logs nothing
}

// String describes cfg with the API key redacted, so a Config can be printed
// or logged safely.
func (cfg Config) String() string {
	return fmt.Sprintf("elido.Config{BaseURL: %q, APIKey: %s, WorkspaceID: %q, RatePerMinute: %d, RequestTimeout: %s, MaxAttempts: %d}",
		secret.URL(cfg.BaseURL), redactedKey(cfg.APIKey), cfg.WorkspaceID, cfg.RatePerMinute, cfg.RequestTimeout, cfg.MaxAttempts)
}

// GoString is String, so that %#v redacts the key too.
func (cfg Config) GoString() string { return cfg.String() }

// LogValue logs cfg with the API key redacted.
func (cfg Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", secret.URL(cfg.BaseURL)),
		slog.String("api_key", redactedKey(cfg.APIKey)),
		slog.String("workspace_id", cfg.WorkspaceID),
		slog.Int("rate_per_minute", cfg.RatePerMinute),
		slog.Duration("request_timeout", cfg.RequestTimeout),
		slog.Int("max_attempts", cfg.MaxAttempts),
	)
}

func redactedKey(key string) string {
	if key == "" {
		return "(empty)"
	}
	return "[redacted]"
}

// Validate checks cfg, the one place the ELIDO_* variables are checked:
// cmd/clickrecon calls it before anything runs, and New before it builds a
// client (New fills in a zero BaseURL and RatePerMinute first). Each error
// names the variable to fix, and every variable's mistake is returned,
// joined, so that they can all be fixed at once. A zero RequestTimeout or
// MaxAttempts means the default.
func (cfg Config) Validate() error {
	var errs []error
	base, err := url.Parse(cfg.BaseURL)
	switch {
	case err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "":
		errs = append(errs, fmt.Errorf("ELIDO_API_BASE must be an http(s) URL such as %s, got %q", DefaultBaseURL, secret.URL(cfg.BaseURL)))
	case base.RawQuery != "" || base.Fragment != "":
		errs = append(errs, fmt.Errorf("ELIDO_API_BASE %q has a query or fragment: give only scheme, host and path (e.g. %s)", base.Redacted(), DefaultBaseURL))
	}
	switch {
	case cfg.APIKey == "":
		errs = append(errs, errors.New("ELIDO_API_KEY is not set: give a workspace API key with the analytics:read scope (or ELIDO_API_KEY_FILE)"))
	case strings.ContainsFunc(cfg.APIKey, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		errs = append(errs, errors.New("ELIDO_API_KEY contains spaces or control characters (a trailing newline from a secret file?): check the key"))
	}
	switch cfg.WorkspaceID {
	case "":
		errs = append(errs, errors.New("ELIDO_WORKSPACE_ID is not set: give the id of the Elido workspace to reconcile"))
	case ".", "..":
		errs = append(errs, fmt.Errorf("%q is not a workspace id: check ELIDO_WORKSPACE_ID", cfg.WorkspaceID))
	}
	if cfg.RatePerMinute < 1 {
		errs = append(errs, fmt.Errorf("ELIDO_RATE_LIMIT must be at least 1 request per minute, got %d", cfg.RatePerMinute))
	}
	if cfg.RequestTimeout < 0 {
		errs = append(errs, fmt.Errorf("elido: the request timeout must be positive, got %s", cfg.RequestTimeout))
	}
	if cfg.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("elido: the number of attempts must be positive, got %d", cfg.MaxAttempts))
	}
	return errors.Join(errs...)
}

// Client reads one workspace's analytics. It is safe for concurrent use;
// all requests share one rate limiter.
type Client struct {
	base        *url.URL
	apiKey      string
	workspaceID string
	timeout     time.Duration
	retry       backoff.Policy // elidoRetry with the config's attempts and the client's clock
	httpClient  *http.Client
	log         *slog.Logger
	limiter     *rate.Limiter
	maxBody     int64

	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu       sync.Mutex
	requests map[string]int
}

// Option adjusts a Client beyond its Config.
type Option func(*Client)

// WithClock replaces the clock the client reads and waits on: its rate
// limiter, backoff and Retry-After waits and its deadline checks. Tests use
// it to run retries without waiting for real; sleep must return ctx's error
// if ctx ends first.
func WithClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) {
		c.now = now
		c.sleep = sleep
	}
}

// NewLimiter is the client-side rate limiter of ratePerMinute requests
// (ELIDO_RATE_LIMIT; 0 is the default), as New builds it: clients given
// the same one (WithLimiter) keep to that rate together, as clients of
// one key must.
func NewLimiter(ratePerMinute int) *rate.Limiter {
	if ratePerMinute <= 0 {
		ratePerMinute = defaultRatePerMinute
	}
	return rate.NewLimiter(rate.Limit(float64(ratePerMinute)/60), limiterBurst)
}

// WithLimiter replaces the client's own rate limiter (of its
// RatePerMinute) with l, which other clients may share: clients of one
// Elido key in one process share one, so that together they keep to the
// key's rate limit.
func WithLimiter(l *rate.Limiter) Option {
	return func(c *Client) { c.limiter = l }
}

// New checks cfg, fills in its defaults and returns a client.
//
// The client follows a redirect only within the origin (scheme, host and
// port) of ELIDO_API_BASE, with the API key, which that origin already
// holds. A redirect anywhere else is not followed at all, so the key never
// reaches another server, and fails the request without a retry (see
// internal/safehttp). No request carries a Referer.
func New(cfg Config, opts ...Option) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.RatePerMinute == 0 {
		cfg.RatePerMinute = defaultRatePerMinute
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := url.Parse(cfg.BaseURL) // Validate parsed it
	base.Path = strings.TrimRight(base.Path, "/")
	base.RawPath = strings.TrimRight(base.RawPath, "/")
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = defaultRequestTimeout
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = defaultMaxAttempts
	}
	cfg.HTTPClient = safehttp.Client(cfg.HTTPClient, safehttp.SameOrigin)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		base:        base,
		apiKey:      cfg.APIKey,
		workspaceID: cfg.WorkspaceID,
		timeout:     cfg.RequestTimeout,
		retry:       elidoRetry,
		httpClient:  cfg.HTTPClient,
		log:         cfg.Logger,
		limiter:     NewLimiter(cfg.RatePerMinute),
		maxBody:     maxBodyBytes,
		now:         time.Now,
		sleep:       backoff.Sleep,
		requests:    map[string]int{},
	}
	c.retry.Attempts = cfg.MaxAttempts
	for _, opt := range opts {
		opt(c)
	}
	c.retry.Sleep = c.sleep
	return c, nil
}

// String describes the client without its API key.
func (c *Client) String() string {
	return fmt.Sprintf("elido.Client{base: %s, workspace: %q}", c.base.Redacted(), c.workspaceID)
}

// RatePerMinute is the pace the client allows itself (ELIDO_RATE_LIMIT):
// a caller plans with it how many requests fit in the time it has.
func (c *Client) RatePerMinute() float64 { return float64(c.limiter.Limit()) * 60 }

// Requests returns how many HTTP requests the client has sent per endpoint
// ("summary", "timeseries", "breakdown/link", "breakdown/country"), every
// attempt counted, retries included.
func (c *Client) Requests() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.requests)
}

func (c *Client) count(endpoint string) {
	c.mu.Lock()
	c.requests[endpoint]++
	c.mu.Unlock()
}

// outcome is what one attempt came to.
type outcome struct {
	status    int
	requestID string
	body      []byte
	err       error         // nil on a 2xx answer
	retry     bool          // whether another attempt may succeed
	wait      time.Duration // the wait the server asked for …
	asked     bool          // … if it asked
	sent      bool          // the request went out (whatever its answer)
}

// get sends GET endpoint?q until an answer is decoded, a failure is final,
// the attempts run out or waiting for the next one would pass ctx's
// deadline. decode reads a 2xx body; it may run once per attempt. op names
// the operation in errors ("GET summary 2026-11-26..2026-11-28").
func (c *Client) get(ctx context.Context, op, endpoint string, q url.Values, decode func([]byte) error) error {
	u := endpointURL(c.base, c.workspaceID, endpoint, q).String()
	malformed := 0
	for attempt := 1; ; attempt++ {
		if !allowed(ctx) {
			return fmt.Errorf("elido: %s: %w", op, ErrBudget)
		}
		limited, err := c.waitLimiter(ctx)
		if err != nil {
			unsent(ctx)
			return fmt.Errorf("elido: %s: %w", op, err)
		}
		start := c.now()
		o := c.attempt(ctx, endpoint, u)
		if !o.sent {
			unsent(ctx)
		}
		c.logAttempt(ctx, endpoint, attempt, o, limited, c.now().Sub(start))
		if o.err == nil {
			err := decode(o.body)
			if err == nil {
				return nil
			}
			// A decode error may quote the body (a link id): redact it.
			err = secret.Scrub(err, "[redacted]", c.secrets()...)
			o.err = fmt.Errorf("unusable response%s: %w", requestIDNote(o.requestID), err)
			if !isMalformed(err) {
				return fmt.Errorf("elido: %s: %w", op, o.err)
			}
			if malformed >= maxMalformedRetries {
				return c.final(op, o.err, attempt, "")
			}
			malformed++
			o.retry = true
		}
		if !o.retry {
			return c.final(op, o.err, attempt, "")
		}
		if !c.retry.Again(attempt) {
			return c.final(op, o.err, attempt, "")
		}
		wait := o.wait
		if !o.asked {
			wait = c.retry.Backoff(attempt)
		}
		if o.asked && !c.retry.Follows(wait) {
			return c.final(op, o.err, attempt, fmt.Sprintf("not retried: Elido asked to wait %s, over the %s the client waits", wait, c.retry.MaxRetryAfter))
		}
		if deadline, ok := ctx.Deadline(); ok {
			if left := deadline.Sub(c.now()); wait >= left {
				return c.final(op, o.err, attempt, fmt.Sprintf("not retried: waiting %s would pass the run's deadline, %s away", wait, max(left, 0).Round(time.Millisecond)))
			}
		}
		c.log.LogAttrs(ctx, slog.LevelDebug, "elido retry",
			slog.String("endpoint", endpoint),
			slog.Int("attempt", attempt),
			slog.Int("status", o.status),
			slog.String("request_id", o.requestID),
			slog.Duration("wait", wait),
			slog.Bool("server_asked", o.asked),
			slog.String("err", o.err.Error()))
		if err := c.retry.Pause(ctx, wait); err != nil {
			return fmt.Errorf("elido: %s: waiting %s to retry: %w (last error: %v)", op, wait, err, o.err)
		}
	}
}

// final is the error get returns: an APIError, completed with the
// operation and how retrying ended, or any other error wrapped with op.
func (c *Client) final(op string, err error, attempts int, giveUp string) error {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		apiErr.op = op
		apiErr.attempts = attempts
		apiErr.giveUp = giveUp
		return apiErr
	}
	var notes []string
	if attempts > 1 {
		notes = append(notes, fmt.Sprintf("gave up after %d attempts", attempts))
	}
	if giveUp != "" {
		notes = append(notes, giveUp)
	}
	if len(notes) == 0 {
		return fmt.Errorf("elido: %s: %w", op, err)
	}
	return fmt.Errorf("elido: %s: %s: %w", op, strings.Join(notes, "; "), err)
}

// waitLimiter waits for the client-side rate limiter on the client's clock
// and returns how long it waited. It gives up at once when the wait would
// pass ctx's deadline.
func (c *Client) waitLimiter(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	now := c.now()
	r := c.limiter.ReserveN(now, 1)
	if !r.OK() {
		return 0, errors.New("the client-side rate limiter cannot grant a request")
	}
	d := r.DelayFrom(now)
	if d <= 0 {
		return 0, nil
	}
	if deadline, ok := ctx.Deadline(); ok && now.Add(d).After(deadline) {
		r.CancelAt(now)
		return 0, fmt.Errorf("the client-side rate limit (ELIDO_RATE_LIMIT) delays the request by %s, past the run's deadline", d)
	}
	if err := c.sleep(ctx, d); err != nil {
		r.CancelAt(c.now())
		return 0, fmt.Errorf("waiting for the client-side rate limit: %w", err)
	}
	return d, nil
}

// attempt sends one request and reads its answer.
func (c *Client) attempt(ctx context.Context, endpoint, u string) outcome {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// A request is sent once it has been written to a connection, or an
	// answer came: one that failed before (no connection could be made,
	// the run's context ended first) never reached Elido, and is handed
	// back to the budget (WithBudget).
	var wrote atomic.Bool
	actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{WroteRequest: func(w httptrace.WroteRequestInfo) {
		if w.Err == nil {
			wrote.Store(true)
		}
	}})
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u, nil)
	if err != nil {
		return outcome{err: err}
	}
	req.Header.Set(headerAuthorization, bearerPrefix+c.apiKey)
	req.Header.Set(headerUserAgent, userAgent)
	req.Header.Set(headerAccept, mediaJSON)
	c.count(endpoint)
	o := c.send(ctx, actx, endpoint, req)
	o.sent = o.sent || wrote.Load()
	return o
}

// send sends req and reads its answer; sent says whether one came.
func (c *Client) send(ctx, actx context.Context, endpoint string, req *http.Request) outcome {
	resp, err := c.httpClient.Do(req)
	if errors.Is(err, safehttp.ErrRedirect) {
		// The same answer would come again: not a transient failure.
		return outcome{err: fmt.Errorf("%w: set ELIDO_API_BASE to the API itself, not to a URL that redirects", err)}
	}
	if err != nil {
		return c.transportFailure(ctx, actx, err)
	}
	defer resp.Body.Close()
	o := outcome{status: resp.StatusCode, requestID: c.redact(resp.Header.Get(headerRequestID)), sent: true}

	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		o.body, err = readBody(resp.Body, c.maxBody)
		switch {
		case errors.Is(err, errBodyTooLarge):
			o.err = fmt.Errorf("response%s is larger than the client accepts (%d bytes)", requestIDNote(o.requestID), c.maxBody)
		case err != nil:
			f := c.transportFailure(ctx, actx, fmt.Errorf("reading the response%s: %w", requestIDNote(o.requestID), err))
			f.status, f.requestID, f.sent = o.status, o.requestID, true
			return f
		}
		return o
	}

	// The status alone is enough if the body is lost or long: keep what came.
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	f := c.errorFields(data)
	if o.requestID == "" {
		o.requestID = f.requestID
	}
	bodyWait, bodyAsked := f.wait, f.asked
	o.err = &APIError{
		Endpoint:  endpoint,
		Status:    resp.StatusCode,
		Code:      f.code,
		Message:   f.message,
		RequestID: o.requestID,
	}
	o.retry = c.retry.RetryStatus(resp.StatusCode, false)
	if o.retry && resp.StatusCode == http.StatusTooManyRequests {
		o.wait, o.asked = c.serverWait(resp.Header, bodyWait, bodyAsked)
	}
	return o
}

// errorFields reads an error body with the API key redacted: in the whole
// body first, before a snippet of it is cut (a key echoed across the
// snippet's end would no longer match once cut), and again in each field,
// where JSON escapes may have hidden it from the first pass.
func (c *Client) errorFields(data []byte) errorFields {
	code, message, id, wait, asked := apiErrorFields([]byte(c.redact(string(data))))
	return errorFields{code: c.redact(code), message: c.redact(message), requestID: c.redact(id), wait: wait, asked: asked}
}

type errorFields struct {
	code, message, requestID string
	wait                     time.Duration
	asked                    bool
}

// transportFailure classifies an error from sending or reading: the run's
// context ending is final, anything else (a timeout of this attempt, a
// refused or reset connection) may pass.
func (c *Client) transportFailure(ctx, actx context.Context, err error) outcome {
	switch {
	case ctx.Err() != nil:
		return outcome{err: fmt.Errorf("the run was cancelled or reached its deadline: %w", err)}
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		return outcome{err: fmt.Errorf("no answer within the request timeout of %s: %w", c.timeout, err), retry: c.retry.RepeatUnsure}
	}
	return outcome{err: err, retry: c.retry.RepeatUnsure}
}

// serverWait is how long a 429 asks to wait: Retry-After, else
// X-RateLimit-Reset, else the body's retry_after_seconds.
func (c *Client) serverWait(h http.Header, bodyWait time.Duration, bodyAsked bool) (time.Duration, bool) {
	now := c.now()
	if d, ok := retryAfterHeader(h.Get(headerRetryAfter), now); ok {
		return d, true
	}
	if d, ok := rateLimitResetHeader(h.Get(headerRateLimitReset), now); ok {
		return d, true
	}
	return bodyWait, bodyAsked
}

func (c *Client) logAttempt(ctx context.Context, endpoint string, attempt int, o outcome, limited, took time.Duration) {
	attrs := []slog.Attr{
		slog.String("endpoint", endpoint),
		slog.Int("attempt", attempt),
		slog.Int("status", o.status),
		slog.String("request_id", o.requestID),
		slog.Duration("limiter_wait", limited),
		slog.Duration("duration", took),
	}
	if o.err != nil {
		attrs = append(attrs, slog.String("err", o.err.Error()))
	}
	c.log.LogAttrs(ctx, slog.LevelDebug, "elido request", attrs...)
}

// redact removes the API key from text the server sent, in case an error
// message echoes it: as sent, and URL- or JSON-escaped.
func (c *Client) redact(s string) string {
	return secret.Redact(s, "[redacted]", c.secrets()...)
}

func (c *Client) secrets() []string {
	return []string{c.apiKey, url.QueryEscape(c.apiKey), jsonEscaped(c.apiKey)}
}

// jsonEscaped is s as encoding/json writes it inside a string, where it
// differs from s (a key holding <, > or &).
func jsonEscaped(s string) string {
	b, err := json.Marshal(s)
	if err != nil || len(b) < 2 {
		return ""
	}
	return string(b[1 : len(b)-1])
}

var errBodyTooLarge = errors.New("response body too large")

func readBody(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errBodyTooLarge
	}
	return data, nil
}

// isMalformed reports whether a decode error means the body is not JSON or
// is cut short, as opposed to JSON that breaks the contract.
func isMalformed(err error) bool {
	var syntax *json.SyntaxError
	return errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF)
}

func requestIDNote(id string) string {
	if id == "" {
		return ""
	}
	return " (request_id " + id + ")"
}
