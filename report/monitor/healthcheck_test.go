package monitor

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The check's secret, as in https://hc-ping.com/<uuid>.
const checkUUID = "5bf66975-d4c7-4bf5-bcc8-b8d8a82ea278"

// ping is one request a fake healthchecks.io received.
type ping struct {
	Method      string
	Path        string
	Query       string
	ContentType string
	Body        string
}

// fakeHealthchecks records pings and answers each with the next status of
// statuses (the last one repeats).
type fakeHealthchecks struct {
	*httptest.Server
	mu       sync.Mutex
	pings    []ping
	statuses []int
}

func newFakeHealthchecks(t *testing.T, statuses ...int) *fakeHealthchecks {
	t.Helper()
	if len(statuses) == 0 {
		statuses = []int{http.StatusOK}
	}
	f := &fakeHealthchecks{statuses: statuses}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.pings = append(f.pings, ping{
			Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
			ContentType: r.Header.Get("Content-Type"), Body: string(b),
		})
		status := f.statuses[min(len(f.pings), len(f.statuses))-1]
		f.mu.Unlock()
		w.WriteHeader(status)
		io.WriteString(w, http.StatusText(status))
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeHealthchecks) received() []ping {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ping(nil), f.pings...)
}

func TestHealthcheckPings(t *testing.T) {
	hc := newFakeHealthchecks(t)
	h, err := NewHealthcheck(hc.URL + "/" + checkUUID + "/")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := h.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	summary := "run 20261126_20261128_5049a4dbee9a: discrepancies, 3 days,\n1 missing (-2 clicks)\n"
	if err := h.Finish(ctx, 0, summary); err != nil {
		t.Fatalf("Finish(0): %v", err)
	}
	if err := h.Finish(ctx, 3, "incomplete: deadline exceeded"); err != nil {
		t.Fatalf("Finish(3): %v", err)
	}

	const text = "text/plain; charset=utf-8"
	want := []ping{
		{Method: "POST", Path: "/" + checkUUID + "/start", ContentType: text},
		{Method: "POST", Path: "/" + checkUUID + "/0", ContentType: text,
			Body: "run 20261126_20261128_5049a4dbee9a: discrepancies, 3 days, 1 missing (-2 clicks)"},
		{Method: "POST", Path: "/" + checkUUID + "/3", ContentType: text,
			Body: "incomplete: deadline exceeded"},
	}
	if diff := cmp.Diff(want, hc.received()); diff != "" {
		t.Errorf("pings (-want +got):\n%s", diff)
	}
}

func TestHealthcheckSlugURLKeepsItsQuery(t *testing.T) {
	hc := newFakeHealthchecks(t)
	h, err := NewHealthcheck(hc.URL + "/ping/Xq3-ping-key/clickrecon-48213?create=1")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := h.Finish(context.Background(), 1, "gaps"); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	var got []string
	for _, p := range hc.received() {
		got = append(got, p.Path+"?"+p.Query)
	}
	want := []string{
		"/ping/Xq3-ping-key/clickrecon-48213/start?create=1",
		"/ping/Xq3-ping-key/clickrecon-48213/1?create=1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ping URLs (-want +got):\n%s", diff)
	}
	if s := h.String(); strings.Contains(s, "Xq3") || strings.Contains(s, "clickrecon-48213") || strings.Contains(s, "create") {
		t.Errorf("String() = %q shows the path or query", s)
	}
}

func TestHealthcheckRetriesServerErrors(t *testing.T) {
	hc := newFakeHealthchecks(t, http.StatusBadGateway, http.StatusOK)
	h, err := NewHealthcheck(hc.URL + "/" + checkUUID)
	if err != nil {
		t.Fatal(err)
	}
	h.retry.Wait = time.Millisecond
	if err := h.Start(context.Background()); err != nil {
		t.Fatalf("Start after one 502: %v", err)
	}
	if n := len(hc.received()); n != 2 {
		t.Errorf("%d requests, want 2 (one 502, one retry)", n)
	}
}

// TestHealthcheckErrorsHideTheSecret checks every way a ping fails: the
// error says what happened and never shows the check's UUID.
func TestHealthcheckErrorsHideTheSecret(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	hang := newHangingServer(t)

	tests := []struct {
		name     string
		base     string
		statuses []int
		want     string // in the error
		wantReqs int
		check    func(t *testing.T, err error)
	}{{
		name:     "unknown_check_is_not_retried",
		statuses: []int{http.StatusNotFound},
		want:     "404",
		wantReqs: 1,
	}, {
		name:     "server_errors_give_up_after_three_attempts",
		statuses: []int{http.StatusServiceUnavailable},
		want:     "503",
		wantReqs: 3,
	}, {
		name:     "client_error_is_not_retried",
		statuses: []int{http.StatusBadRequest},
		want:     "400",
		wantReqs: 1,
	}, {
		name: "connection_refused",
		base: closedURL,
		want: "connect",
	}, {
		name: "hanging_server_times_out",
		base: hang.URL,
		check: func(t *testing.T, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v is not a deadline error", err)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hc *fakeHealthchecks
			base := tt.base
			if base == "" {
				hc = newFakeHealthchecks(t, tt.statuses...)
				base = hc.URL
			}
			h, err := NewHealthcheck(base + "/" + checkUUID + "?rid=" + checkUUID)
			if err != nil {
				t.Fatal(err)
			}
			h.retry.Wait = time.Millisecond
			h.timeout = 200 * time.Millisecond
			start := time.Now()
			err = h.Finish(context.Background(), 3, "incomplete")
			if err == nil {
				t.Fatal("got nil error")
			}
			t.Logf("error: %v", err)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Finish took %s despite a 200ms timeout", d)
			}
			if strings.Contains(err.Error(), checkUUID) || strings.Contains(err.Error(), "5bf66975") {
				t.Errorf("error shows the check's UUID: %v", err)
			}
			if !strings.Contains(err.Error(), "/…/3") {
				t.Errorf("error %q does not say which ping failed", err)
			}
			if tt.want != "" && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if hc != nil {
				if n := len(hc.received()); n != tt.wantReqs {
					t.Errorf("%d requests, want %d", n, tt.wantReqs)
				}
			}
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}

func TestHealthcheckRejects(t *testing.T) {
	for _, raw := range []string{
		"",
		"hc-ping.com/" + checkUUID,
		"ftp://hc-ping.com/" + checkUUID,
		"https:///" + checkUUID,
		"https://hc-ping.com/" + checkUUID + "#x",
		"https://[::1/" + checkUUID,
	} {
		_, err := NewHealthcheck(raw)
		if err == nil {
			t.Errorf("NewHealthcheck(%q): got nil error", raw)
			continue
		}
		if !strings.Contains(err.Error(), "HEALTHCHECK_URL") {
			t.Errorf("NewHealthcheck(%q): error %q does not name the variable", raw, err)
		}
		if strings.Contains(err.Error(), checkUUID) {
			t.Errorf("NewHealthcheck(%q): error shows the UUID: %v", raw, err)
		}
	}

	h, err := NewHealthcheck("https://hc-ping.com/" + checkUUID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := h.String(), "https://hc-ping.com/…"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if err := h.Finish(context.Background(), 256, ""); err == nil {
		t.Error("Finish with exit code 256: got nil error")
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"joins_lines", "a\nb\r\n\tc  d\n", "a b c d"},
		{"empty", "", ""},
		{"long_is_cut_on_a_character_boundary", strings.Repeat("é", maxSummary), strings.Repeat("é", maxSummary/2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := oneLine(tt.in); got != tt.want {
				t.Errorf("oneLine: got %d bytes %.20q…, want %d bytes %.20q…", len(got), got, len(tt.want), tt.want)
			}
		})
	}
}
