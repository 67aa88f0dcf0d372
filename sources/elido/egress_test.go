package elido_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/safehttp"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// otherOrigin is a server that must never be reached: it records what it
// got and answers a valid summary, so that a followed redirect would
// succeed and hide the leak.
type otherOrigin struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
}

func newOtherOrigin(t *testing.T) *otherOrigin {
	t.Helper()
	o := &otherOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.headers = append(o.headers, r.Header.Clone())
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","clicks":1,"unique_clicks":1}`))
	}))
	t.Cleanup(o.Close)
	return o
}

// check fails the test if the other origin got a request, and names what
// leaked to it.
func (o *otherOrigin) check(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, h := range o.headers {
		if a := h.Get("Authorization"); a != "" {
			t.Errorf("the other origin received Authorization %q", a)
		}
		if r := h.Get("Referer"); r != "" {
			t.Errorf("the other origin received Referer %q", r)
		}
	}
	if len(o.headers) > 0 {
		t.Errorf("the other origin received %d requests, want none", len(o.headers))
	}
}

// TestRedirectToAnotherOriginKeepsTheKey: a 302 to another port of the
// same host, and a 307 from https to plain http, must not carry the key
// there; the request fails, naming where it was sent.
func TestRedirectToAnotherOriginKeepsTheKey(t *testing.T) {
	tests := []struct {
		name   string
		tls    bool
		status int
	}{
		{"302_to_another_port", false, http.StatusFound},
		{"307_https_to_http", true, http.StatusTemporaryRedirect},
		{"308_to_another_port", false, http.StatusPermanentRedirect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := newOtherOrigin(t)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+r.URL.RequestURI(), tt.status)
			})
			var srv *httptest.Server
			if tt.tls {
				srv = httptest.NewTLSServer(h)
			} else {
				srv = httptest.NewServer(h)
			}
			t.Cleanup(srv.Close)
			c, _ := newClient(t, srv.URL+"/v1", func(cfg *elido.Config) { cfg.HTTPClient = srv.Client() })
			_, err := c.Summary(context.Background(), date(t, "2026-11-26"), date(t, "2026-11-28"), time.UTC)
			wantError(t, err, "another origin", strings.TrimPrefix(other.URL, "http://"))
			if !errors.Is(err, safehttp.ErrRedirect) {
				t.Errorf("error %v does not match safehttp.ErrRedirect", err)
			}
			other.check(t)
		})
	}
}

// TestRedirectWithinOriginIsFollowedWithoutReferer: Elido moving a path on
// its own origin still works, and the redirected request has no Referer.
func TestRedirectWithinOriginIsFollowedWithoutReferer(t *testing.T) {
	var mu sync.Mutex
	var referers, auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		referers = append(referers, r.Header.Get("Referer"))
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		if !strings.HasPrefix(r.URL.Path, "/v2/") {
			http.Redirect(w, r, "/v2"+strings.TrimPrefix(r.URL.RequestURI(), "/v1"), http.StatusMovedPermanently)
			return
		}
		w.Write([]byte(`{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","clicks":5,"unique_clicks":4}`))
	}))
	t.Cleanup(srv.Close)
	c, _ := newClient(t, srv.URL+"/v1", nil)
	s, err := c.Summary(context.Background(), date(t, "2026-11-26"), date(t, "2026-11-28"), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if s.Clicks != 5 {
		t.Errorf("clicks %d, want 5", s.Clicks)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auths) != 2 || auths[1] != "Bearer "+testKey {
		t.Errorf("Authorization per request %q: want the key on both, the origin is the same", auths)
	}
	for i, r := range referers {
		if r != "" {
			t.Errorf("request %d carried Referer %q", i, r)
		}
	}
}

// TestErrorBodyIsRedactedBeforeItIsCut: a 503 page that echoes the
// request's Authorization header near the 120th character must not leak
// the key's first characters, as it would if the snippet were cut first.
func TestErrorBodyIsRedactedBeforeItIsCut(t *testing.T) {
	for _, at := range []int{90, 100, 105, 110, 115, 119} {
		prefix := "<html><body>" + strings.Repeat("x", at-len("<html><body>")-len("Bearer ")) + "Bearer "
		body := prefix + testKey + "</body></html>"
		base := cannedServer(t, http.StatusServiceUnavailable, body)
		c, _ := newClient(t, base, func(cfg *elido.Config) { cfg.MaxAttempts = 1 })
		_, err := c.Summary(context.Background(), date(t, "2026-11-26"), date(t, "2026-11-28"), time.UTC)
		wantError(t, err, "HTTP 503")
		for n := 6; n <= len(testKey); n++ {
			if strings.Contains(err.Error(), testKey[:n]) {
				t.Errorf("key at byte %d: error %q holds the key's first %d characters", at, err, n)
				break
			}
		}
	}
}

// TestBreakdownSumOverflowAcrossPages: counts that fit one page each but
// wrap when the pages are added up are an error, not a negative total.
func TestBreakdownSumOverflowAcrossPages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "" {
			w.Write([]byte(`{"items":[{"link_id":"a","clicks":9223372036854775800}],"next_cursor":"p2"}`))
			return
		}
		w.Write([]byte(`{"items":[{"link_id":"b","clicks":8}],"next_cursor":null}`))
	}))
	t.Cleanup(srv.Close)
	c, _ := newClient(t, srv.URL+"/v1", nil)
	_, err := c.LinkBreakdown(context.Background(), date(t, "2026-11-26"), date(t, "2026-11-26"), time.UTC)
	wantError(t, err, "page 2", "add up to more than 9223372036854775807")
}

// TestFakeEgressFaults runs the client against the fake Elido's faults
// for what must never leave the client or become a gap: a redirect to
// another origin, an error page echoing the key across the snippet's end,
// days newest first, a count that would wrap a sum.
func TestFakeEgressFaults(t *testing.T) {
	clicks := []elidotest.Click{
		{TS: ts(t, "2026-11-26T10:00:00Z"), LinkID: "lnk_a", CountryCode: "PL"},
		{TS: ts(t, "2026-11-27T10:00:00Z"), LinkID: "lnk_a", CountryCode: "PL"},
		{TS: ts(t, "2026-11-28T10:00:00Z"), LinkID: "lnk_b", CountryCode: "DE"},
	}
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")
	t.Run("redirect_to_another_origin", func(t *testing.T) {
		other := newOtherOrigin(t)
		f := newFixture(t, clicks, nil)
		f.srv.SetFaults(elidotest.Fault{Kind: elidotest.Redirect, Status: http.StatusTemporaryRedirect, Location: other.URL + "/v1"})
		_, err := f.client.Timeseries(t.Context(), from, to, time.UTC)
		wantError(t, err, "another origin", "ELIDO_API_BASE")
		other.check(t)
		if n := f.client.Requests()["timeseries"]; n != 1 {
			t.Errorf("%d requests, want 1: a refused redirect is not retried", n)
		}
	})
	t.Run("error_page_echoes_the_key", func(t *testing.T) {
		f := newFixture(t, clicks, func(cfg *elido.Config) { cfg.MaxAttempts = 2 })
		f.srv.SetFaults(elidotest.Fault{Kind: elidotest.EchoAuthorization})
		_, err := f.client.Summary(t.Context(), from, to, time.UTC)
		wantError(t, err, "HTTP 503", "[redacted]")
		if strings.Contains(err.Error(), testKey[:8]) {
			t.Errorf("error %q shows the start of the key", err)
		}
	})
	t.Run("days_newest_first", func(t *testing.T) {
		f := newFixture(t, clicks, nil)
		f.srv.SetFaults(elidotest.Fault{Kind: elidotest.ReversedDays})
		_, err := f.client.Timeseries(t.Context(), from, to, time.UTC)
		wantError(t, err, "out of order", "oldest first")
		if strings.Contains(err.Error(), "missing") {
			t.Errorf("error %q calls out-of-order days missing", err)
		}
	})
	t.Run("count_that_wraps_the_sum", func(t *testing.T) {
		f := newFixture(t, clicks, nil)
		f.srv.SetFaults(elidotest.Fault{Kind: elidotest.HugeCount})
		_, err := f.client.Timeseries(t.Context(), from, to, time.UTC)
		wantError(t, err, "add up to more than 9223372036854775807")
	})
}
