package elido_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

const (
	testWorkspace = "ws_42"
	testKey       = "sk_live_TOPSECRET_9f8e7d"
)

// clock is a fake clock: Sleep records the wait and moves time on at once.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newClock() *clock {
	// An hour ahead of real time: a context deadline set on this clock
	// never passes in real time while a test runs, and the client reads
	// it on this clock. Whole seconds, so that Unix-second headers give
	// exact waits.
	return &clock{now: time.Now().Add(time.Hour).Truncate(time.Second)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// fixture is the real client talking to the fake, on a fake clock.
type fixture struct {
	srv    *elidotest.Server
	client *elido.Client
	clock  *clock
}

// newFixture starts a fake serving clicks and a client for it. adjust may
// change the client's config. The client's rate limit is high, so that its
// waits (10µs) are shorter than any retry wait and Sleeps holds only those;
// its backoff jitter always takes the ceiling.
func newFixture(t *testing.T, clicks []elidotest.Click, adjust func(*elido.Config)) fixture {
	t.Helper()
	srv := elidotest.NewServer(testWorkspace, testKey, clicks)
	t.Cleanup(srv.Close)
	clk := newClock()
	srv.SetNow(clk.Now)
	cfg := elido.Config{
		BaseURL:        srv.URL(),
		APIKey:         testKey,
		WorkspaceID:    testWorkspace,
		RatePerMinute:  6_000_000,
		RequestTimeout: 10 * time.Second,
		MaxAttempts:    5,
	}
	if adjust != nil {
		adjust(&cfg)
	}
	c, err := elido.New(cfg, elido.WithClock(clk.Now, clk.Sleep))
	if err != nil {
		t.Fatalf("elido.New: %v", err)
	}
	elido.SetJitter(c, func(ceiling time.Duration) time.Duration { return ceiling })
	return fixture{srv: srv, client: c, clock: clk}
}

// cannedServer answers every request with status and body, and returns
// its base URL.
func cannedServer(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-ID", "req_canned")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func newClient(t *testing.T, baseURL string, adjust func(*elido.Config)) (*elido.Client, *clock) {
	t.Helper()
	clk := newClock()
	cfg := elido.Config{BaseURL: baseURL, APIKey: testKey, WorkspaceID: testWorkspace, RatePerMinute: 6_000_000, MaxAttempts: 3}
	if adjust != nil {
		adjust(&cfg)
	}
	c, err := elido.New(cfg, elido.WithClock(clk.Now, clk.Sleep))
	if err != nil {
		t.Fatalf("elido.New: %v", err)
	}
	elido.SetJitter(c, func(ceiling time.Duration) time.Duration { return ceiling })
	return c, clk
}

// zone loads an IANA zone.
func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func date(t *testing.T, s string) reconcile.Date {
	t.Helper()
	d, err := reconcile.ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func ts(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// wantError checks that err is an error whose text holds every part and
// never the API key.
func wantError(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	msg := err.Error()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q\ndoes not contain %q", msg, p)
		}
	}
	if strings.Contains(msg, testKey) {
		t.Errorf("error %q contains the API key", msg)
	}
}
