package elido_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

func TestNew(t *testing.T) {
	valid := elido.Config{APIKey: testKey, WorkspaceID: testWorkspace}
	tests := []struct {
		name   string
		adjust func(*elido.Config)
		err    string // "" for success
	}{
		{"defaults_are_enough", func(*elido.Config) {}, ""},
		{"http_base_with_trailing_slash", func(c *elido.Config) { c.BaseURL = "http://127.0.0.1:8080/v1/" }, ""},
		{"base_not_http", func(c *elido.Config) { c.BaseURL = "ftp://api.elido.app/v1" }, `ELIDO_API_BASE must be an http(s) URL such as https://api.elido.app/v1, got "ftp://api.elido.app/v1"`},
		{"base_without_scheme", func(c *elido.Config) { c.BaseURL = "api.elido.app/v1" }, "ELIDO_API_BASE must be an http(s) URL"},
		{"base_unparsable", func(c *elido.Config) { c.BaseURL = "https://a b:%zz" }, `got "(unparsable)"`},
		{"base_with_query", func(c *elido.Config) { c.BaseURL = "https://api.elido.app/v1?x=1" }, "has a query or fragment"},
		{"base_password_redacted", func(c *elido.Config) { c.BaseURL = "ftp://u:hunter2@api.elido.app" }, "ftp://u:xxxxx@api.elido.app"},
		{"no_key", func(c *elido.Config) { c.APIKey = "" }, "ELIDO_API_KEY is not set"},
		{"key_with_newline", func(c *elido.Config) { c.APIKey = testKey + "\n" }, "contains spaces or control characters (a trailing newline from a secret file?)"},
		{"no_workspace", func(c *elido.Config) { c.WorkspaceID = "" }, "ELIDO_WORKSPACE_ID is not set"},
		{"dot_dot_workspace", func(c *elido.Config) { c.WorkspaceID = ".." }, `".." is not a workspace id`},
		{"negative_rate", func(c *elido.Config) { c.RatePerMinute = -1 }, "ELIDO_RATE_LIMIT must be at least 1"},
		{"negative_timeout", func(c *elido.Config) { c.RequestTimeout = -time.Second }, "the request timeout must be positive"},
		{"negative_attempts", func(c *elido.Config) { c.MaxAttempts = -1 }, "the number of attempts must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid
			tt.adjust(&cfg)
			c, err := elido.New(cfg)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(c.String(), testKey) {
					t.Errorf("String() %q contains the key", c.String())
				}
				return
			}
			wantError(t, err, tt.err)
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q holds the base URL's password", err)
			}
		})
	}
}

// Each ELIDO_* variable's mistake is named, not only the first one's, so
// that a newcomer fixes them all in one go.
func TestValidateNamesEveryVariable(t *testing.T) {
	err := elido.Config{BaseURL: "api.elido.app", RatePerMinute: 0}.Validate()
	if err == nil {
		t.Fatal("a config without base, key, workspace or rate was accepted")
	}
	for _, want := range []string{"ELIDO_API_BASE", "ELIDO_API_KEY is not set", "ELIDO_WORKSPACE_ID is not set", "ELIDO_RATE_LIMIT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %s:\n%v", want, err)
		}
	}
}

func TestConfigNeverShowsTheKey(t *testing.T) {
	cfg := elido.Config{BaseURL: "https://u:hunter2@api.elido.app/v1", APIKey: testKey, WorkspaceID: testWorkspace, RatePerMinute: 60}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "elido", cfg)
	for _, out := range []string{
		//lint:ignore S1025 the %s verb itself is under test, not cfg.String
		fmt.Sprint(cfg), fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%s", cfg), logged.String(),
	} {
		if strings.Contains(out, testKey) || strings.Contains(out, "hunter2") {
			t.Errorf("%q shows a secret", out)
		}
		if !strings.Contains(out, "redacted") {
			t.Errorf("%q does not say the key is redacted", out)
		}
	}
}

func TestAPIErrorFields(t *testing.T) {
	tests := []struct {
		name   string
		key    string // the client's key; the fake's is testKey
		tz     string
		faults []elidotest.Fault
		want   elido.APIError
		text   string
	}{
		{
			name: "wrong_key",
			key:  "sk_live_other",
			tz:   "UTC",
			want: elido.APIError{Endpoint: "summary", Status: 401, Code: "unauthorized", Message: "invalid or missing API key", RequestID: "req_000001"},
			text: `elido: GET summary 2026-11-26..2026-11-28: HTTP 401 unauthorized: "invalid or missing API key" (request_id req_000001): ` +
				"the API key is missing, revoked or expired: check ELIDO_API_KEY",
		},
		{
			name:   "forbidden",
			tz:     "UTC",
			faults: []elidotest.Fault{{Kind: elidotest.Forbidden}},
			want:   elido.APIError{Endpoint: "summary", Status: 403, Code: "forbidden", Message: "the API key lacks the analytics:read scope", RequestID: "req_000001"},
			text: `elido: GET summary 2026-11-26..2026-11-28: HTTP 403 forbidden: "the API key lacks the analytics:read scope" (request_id req_000001): ` +
				"the API key lacks the analytics:read scope: create a key with analytics:read",
		},
		{
			name: "unknown_zone_is_a_400_not_retried",
			tz:   "Mars/Olympus",
			want: elido.APIError{Endpoint: "summary", Status: 400, Code: "invalid_parameter", Message: `unknown time zone "Mars/Olympus"`, RequestID: "req_000001"},
			text: `elido: GET summary 2026-11-26..2026-11-28: HTTP 400 invalid_parameter: "unknown time zone \"Mars/Olympus\"" (request_id req_000001): ` +
				"Elido rejected the request: check the dates and time zone; if they are right, the API has changed and clickrecon needs a fix",
		},
		{
			name:   "429_body_shape_error_is_the_code",
			tz:     "UTC",
			faults: []elidotest.Fault{{Kind: elidotest.RateLimitedBody, RetryAfter: time.Hour}},
			want:   elido.APIError{Endpoint: "summary", Status: 429, Code: "rate_limited", Message: "Too many requests, slow down", RequestID: "req_000001"},
			text: `elido: GET summary 2026-11-26..2026-11-28: HTTP 429 rate_limited: "Too many requests, slow down" ` +
				"(request_id req_000001; not retried: Elido asked to wait 1h0m0s, over the 15m0s the client waits): " +
				"rate limited by Elido (other automation in the workspace shares the budget): lower ELIDO_RATE_LIMIT or run later",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, novemberClicks(t), func(cfg *elido.Config) {
				if tt.key != "" {
					cfg.APIKey = tt.key
				}
			})
			f.srv.SetFaults(tt.faults...)
			_, err := f.client.Summary(t.Context(), date(t, "2026-11-26"), date(t, "2026-11-28"), time.FixedZone(tt.tz, 0))
			var got *elido.APIError
			if !errors.As(err, &got) {
				t.Fatalf("error %v is not an *APIError", err)
			}
			if diff := gocmp.Diff(&tt.want, got, cmpopts.IgnoreUnexported(elido.APIError{})); diff != "" {
				t.Errorf("APIError (-want +got):\n%s", diff)
			}
			if diff := gocmp.Diff(tt.text, err.Error()); diff != "" {
				t.Errorf("Error() (-want +got):\n%s", diff)
			}
			if errors.Is(err, elido.ErrNotFound) {
				t.Errorf("a %d matches ErrNotFound", got.Status)
			}
			if n := f.srv.Requests()["summary"]; n != 1 {
				t.Errorf("made %d requests, want 1", n)
			}
		})
	}
}

func TestWrongWorkspaceIsNotFound(t *testing.T) {
	f := newFixture(t, nil, func(cfg *elido.Config) { cfg.WorkspaceID = "ws_other" })
	_, err := f.client.Timeseries(t.Context(), date(t, "2026-11-26"), date(t, "2026-11-28"), time.UTC)
	wantError(t, err, "HTTP 404 not_found", `"workspace ws_other not found"`, "check ELIDO_WORKSPACE_ID and ELIDO_API_BASE")
	if !errors.Is(err, elido.ErrNotFound) {
		t.Errorf("error %v does not match ErrNotFound", err)
	}
}

// TestKeyNeverLeaks drives the client through every failure with debug
// logging on, against a fake and against a server that echoes the key back
// in its error bodies, and looks for the key in every error and log line.
func TestKeyNeverLeaks(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	withLogs := func(cfg *elido.Config) {
		cfg.Logger = logger
		cfg.MaxAttempts = 2
		cfg.RequestTimeout = 50 * time.Millisecond
	}
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")
	var errs []error

	f := newFixture(t, novemberClicks(t), withLogs)
	for _, fault := range []elidotest.Fault{
		{Kind: elidotest.RateLimited},
		{Kind: elidotest.RateLimitedBody},
		{Kind: elidotest.RateLimitedReset},
		{Kind: elidotest.ServerError, Status: 500},
		{Kind: elidotest.ServerError, Status: 502},
		{Kind: elidotest.Unauthorized},
		{Kind: elidotest.Forbidden},
		{Kind: elidotest.NotFound},
		{Kind: elidotest.Slow, Delay: time.Minute},
		{Kind: elidotest.Truncated},
		{Kind: elidotest.MissingField, Field: "clicks"},
		{Kind: elidotest.MissingDay},
		{Kind: elidotest.RepeatCursor},
	} {
		f.srv.SetFaults(fault)
		_, err := f.client.Summary(t.Context(), from, to, time.UTC)
		errs = append(errs, err)
		_, err = f.client.Timeseries(t.Context(), from, to, time.UTC)
		errs = append(errs, err)
		_, err = f.client.LinkBreakdown(t.Context(), from, to, time.UTC)
		errs = append(errs, err)
	}

	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		w.Header().Set("X-Request-ID", "req_"+auth)
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]string{"error": "bad key " + auth, "code": auth})
	}))
	t.Cleanup(echo.Close)
	c, _ := newClient(t, echo.URL, withLogs)
	_, err := c.Summary(t.Context(), from, to, time.UTC)
	wantError(t, err, "[redacted]")
	errs = append(errs, err)

	for _, err := range errs {
		if err != nil && strings.Contains(err.Error(), testKey) {
			t.Errorf("error %q contains the key", err)
		}
	}
	if strings.Contains(logs.String(), testKey) {
		t.Errorf("the logs contain the key:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `"msg":"elido retry"`) {
		t.Errorf("no retry was logged:\n%s", logs.String())
	}
}

func TestLogsOneLinePerAttempt(t *testing.T) {
	var logs syncBuffer
	f := newFixture(t, novemberClicks(t), func(cfg *elido.Config) {
		cfg.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	f.srv.SetFaults(elidotest.Fault{Kind: elidotest.RateLimited, Times: 1, RetryAfter: 3 * time.Second})
	if _, err := f.client.Summary(t.Context(), date(t, "2026-11-26"), date(t, "2026-11-28"), time.UTC); err != nil {
		t.Fatal(err)
	}
	type line struct {
		Msg       string `json:"msg"`
		Endpoint  string `json:"endpoint"`
		Attempt   int    `json:"attempt"`
		Status    int    `json:"status"`
		RequestID string `json:"request_id"`
		Wait      int64  `json:"wait"`
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var v line
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		got = append(got, v)
	}
	want := []line{
		{Msg: "elido request", Endpoint: "summary", Attempt: 1, Status: 429, RequestID: "req_000001"},
		{Msg: "elido retry", Endpoint: "summary", Attempt: 1, Status: 429, RequestID: "req_000001", Wait: int64(3 * time.Second)},
		{Msg: "elido request", Endpoint: "summary", Attempt: 2, Status: 200, RequestID: "req_000002"},
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}

func TestRequestHeaders(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Write([]byte(`{"items":[]}`))
	}))
	t.Cleanup(srv.Close)
	c, _ := newClient(t, srv.URL, nil)
	if _, err := c.CountryBreakdown(t.Context(), date(t, "2026-11-26"), date(t, "2026-11-28"), time.UTC); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Authorization": "Bearer " + testKey, "User-Agent": "clickrecon", "Accept": "application/json"}
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("header %s is %q, want %q", k, got.Get(k), v)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
