package monitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clickrecon/clickrecon/internal/backoff"
	"github.com/clickrecon/clickrecon/internal/safehttp"
)

// maxSummary bounds the body of the end ping (healthchecks.io keeps the
// first 100 kB of a ping's body; a one-line summary needs far less).
const maxSummary = 10 << 10

// Healthcheck pings a healthchecks.io-style URL: <url>/start when a run
// starts, <url>/<exit code> when it ends. Healthchecks.io, or a
// self-hosted Healthchecks, then alerts when a night's run is late, fails
// or never ends.
type Healthcheck struct {
	base    *url.URL
	secrets []string // the path and query, raw and decoded: never shown
	client  *http.Client
	timeout time.Duration
	retry   backoff.Policy // pingRetry, unless an option changes it
}

// pingRetry is how a ping is retried: a network error or a 5xx is tried
// up to 3 times, 1 s apart, within the call's timeout. A ping the
// healthcheck may already have taken is sent again: a check pinged twice
// is harmless. It reads no Retry-After, and a 429 is not retried.
var pingRetry = backoff.Policy{
	Attempts:     3,
	Wait:         time.Second,
	RateLimited:  false,
	Unsure:       nil, // every 5xx
	RepeatUnsure: true,
}

// Option adjusts a Healthcheck.
type Option func(*Healthcheck)

// WithSleep replaces how the healthcheck waits between attempts, so that
// tests do not wait for real. sleep must return ctx's error if ctx ends
// first.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(h *Healthcheck) { h.retry.Sleep = sleep }
}

// NewHealthcheck checks rawURL, the check's ping URL, such as
// https://hc-ping.com/<uuid> or https://hc-ping.com/<ping-key>/<slug>.
// Its errors never quote the URL: its path is the check's secret. For the
// same reason a ping follows a redirect only within the URL's origin, and
// never sends Referer: a redirect elsewhere fails the ping, unretried (see
// internal/safehttp).
func NewHealthcheck(rawURL string, opts ...Option) (*Healthcheck, error) {
	u, err := parseEndpoint("HEALTHCHECK_URL", rawURL)
	if err != nil {
		return nil, err
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	h := &Healthcheck{
		base:    u,
		client:  safehttp.Client(nil, safehttp.SameOrigin),
		timeout: callTimeout,
		retry:   pingRetry,
	}
	for _, opt := range opts {
		opt(h)
	}
	for _, s := range []string{u.Path, u.EscapedPath(), u.RawQuery} {
		if strings.Trim(s, "/") != "" {
			h.secrets = append(h.secrets, s, strings.Trim(s, "/"))
		}
	}
	if p, ok := u.User.Password(); ok && p != "" {
		h.secrets = append(h.secrets, p, url.QueryEscape(p))
	}
	return h, nil
}

// String returns the ping URL with its path, query and user info hidden,
// for a log line: https://hc-ping.com/….
func (h *Healthcheck) String() string { return h.redacted("") }

func (h *Healthcheck) redacted(suffix string) string {
	s := h.base.Scheme + "://" + h.base.Host + "/…"
	if suffix != "" {
		s += "/" + suffix
	}
	return s
}

// Start pings <url>/start: the run has begun. Healthchecks.io then
// measures the run's duration and alerts if no end ping follows in time.
func (h *Healthcheck) Start(ctx context.Context) error {
	return h.ping(ctx, "start", "")
}

// Finish pings <url>/<code> with summary as the body: healthchecks.io
// marks the check up for code 0 and down for any other code, and shows the
// summary in the check's log. summary is sent as one line.
func (h *Healthcheck) Finish(ctx context.Context, code int, summary string) error {
	if code < 0 || code > 255 {
		return fmt.Errorf("healthcheck ping: exit code %d is outside 0-255", code)
	}
	return h.ping(ctx, strconv.Itoa(code), oneLine(summary))
}

// ping POSTs body to <url>/<suffix>, retrying network errors and 5xx
// answers a few times within the call's timeout.
func (h *Healthcheck) ping(ctx context.Context, suffix, body string) error {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	u := *h.base
	u.Path += "/" + suffix
	if u.RawPath != "" {
		u.RawPath += "/" + suffix
	}
	target := u.String()

	var err error
	for attempt := 1; ; attempt++ {
		var retry bool
		if retry, err = h.post(ctx, target, body); err == nil {
			return nil
		}
		if !retry || !h.retry.Again(attempt) || h.retry.Pause(ctx, h.retry.Backoff(attempt)) != nil {
			break
		}
	}
	return fmt.Errorf("healthcheck ping %s: %w", h.redacted(suffix), redact(err, h.secrets...))
}

// post sends one ping and says whether a failure is worth retrying.
func (h *Healthcheck) post(ctx context.Context, target, body string) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body))
	if err != nil {
		return false, errors.New("cannot build the request")
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	req.Header.Set("User-Agent", jobName)
	resp, err := h.client.Do(req)
	if err != nil {
		// A *url.Error quotes the URL, and so its secret path: keep only
		// the cause (which keeps context.DeadlineExceeded for errors.Is).
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, safehttp.ErrRedirect) {
			return false, err // the same answer would come again
		}
		return ctx.Err() == nil && h.retry.RepeatUnsure, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusNotFound:
		return false, errors.New("404 Not Found: no check has this ping URL (check HEALTHCHECK_URL)")
	default: // a 5xx is retried, a 429 and any other refusal are not
		return h.retry.RetryStatus(resp.StatusCode, false), fmt.Errorf("server answered %s", resp.Status)
	}
}

// oneLine joins the lines of s with spaces and bounds its length.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxSummary {
		s = s[:maxSummary]
		for !utf8.ValidString(s) { // do not end inside a character
			s = s[:len(s)-1]
		}
	}
	return s
}
