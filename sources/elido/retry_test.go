package elido_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// TestRetries runs Summary against each fault of the fake: what the client
// waits (on its fake clock), how many requests it makes, and how it ends.
func TestRetries(t *testing.T) {
	const s = time.Second
	const ms = time.Millisecond
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")
	tests := []struct {
		name        string
		faults      []elidotest.Fault
		maxAttempts int
		sleeps      []time.Duration
		requests    int
		err         []string // nil: success
	}{
		{
			name:     "429_waits_retry_after",
			faults:   []elidotest.Fault{{Kind: elidotest.RateLimited, Times: 1, RetryAfter: 7 * s}},
			sleeps:   []time.Duration{7 * s},
			requests: 2,
		},
		{
			name:     "429_body_shape_waits_retry_after_seconds",
			faults:   []elidotest.Fault{{Kind: elidotest.RateLimitedBody, Times: 1, RetryAfter: 12 * s}},
			sleeps:   []time.Duration{12 * s},
			requests: 2,
		},
		{
			name:     "429_with_only_x_ratelimit_reset_waits_until_reset",
			faults:   []elidotest.Fault{{Kind: elidotest.RateLimitedReset, Times: 1, RetryAfter: 20 * s}},
			sleeps:   []time.Duration{20 * s},
			requests: 2,
		},
		{
			name:     "429_twice_then_success",
			faults:   []elidotest.Fault{{Kind: elidotest.RateLimited, Times: 2, RetryAfter: 3 * s}},
			sleeps:   []time.Duration{3 * s, 3 * s},
			requests: 3,
		},
		{
			name:        "429_until_attempts_run_out",
			faults:      []elidotest.Fault{{Kind: elidotest.RateLimited, RetryAfter: 2 * s}},
			maxAttempts: 3,
			sleeps:      []time.Duration{2 * s, 2 * s},
			requests:    3,
			err: []string{
				"elido: GET summary 2026-11-26..2026-11-28: HTTP 429 rate_limited",
				"request_id req_000003; gave up after 3 attempts",
				"rate limited by Elido", "lower ELIDO_RATE_LIMIT or run later",
			},
		},
		{
			name:     "503_twice_then_success_backs_off",
			faults:   []elidotest.Fault{{Kind: elidotest.ServerError, Status: 503, Times: 2}},
			sleeps:   []time.Duration{500 * ms, 1 * s},
			requests: 3,
		},
		{
			name:     "502_html_page_then_success",
			faults:   []elidotest.Fault{{Kind: elidotest.ServerError, Status: 502, Times: 1}},
			sleeps:   []time.Duration{500 * ms},
			requests: 2,
		},
		{
			name:        "500_always_gives_up_after_max_attempts",
			faults:      []elidotest.Fault{{Kind: elidotest.ServerError, Status: 500}},
			maxAttempts: 5,
			sleeps:      []time.Duration{500 * ms, 1 * s, 2 * s, 4 * s},
			requests:    5,
			err: []string{
				"elido: GET summary 2026-11-26..2026-11-28: HTTP 500 internal_error",
				"(request_id req_000005; gave up after 5 attempts)",
				"Elido is failing or unreachable: run again later",
			},
		},
		{
			name:        "backoff_is_capped_at_30s",
			faults:      []elidotest.Fault{{Kind: elidotest.ServerError, Status: 503}},
			maxAttempts: 9,
			sleeps:      []time.Duration{500 * ms, 1 * s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s},
			requests:    9,
			err:         []string{"HTTP 503", "gave up after 9 attempts"},
		},
		{
			name:        "504_html_page_message_is_its_start",
			faults:      []elidotest.Fault{{Kind: elidotest.ServerError, Status: 504}},
			maxAttempts: 2,
			sleeps:      []time.Duration{500 * ms},
			requests:    2,
			err:         []string{"HTTP 504", "504 Gateway Timeout", "gave up after 2 attempts"},
		},
		{
			name:     "truncated_body_once_then_success",
			faults:   []elidotest.Fault{{Kind: elidotest.Truncated, Times: 1}},
			sleeps:   []time.Duration{500 * ms},
			requests: 2,
		},
		{
			name:     "401_not_retried",
			faults:   []elidotest.Fault{{Kind: elidotest.Unauthorized}},
			requests: 1,
			err: []string{
				`elido: GET summary 2026-11-26..2026-11-28: HTTP 401 unauthorized: "API key revoked" (request_id req_000001)`,
				"the API key is missing, revoked or expired: check ELIDO_API_KEY",
			},
		},
		{
			name:     "403_not_retried",
			faults:   []elidotest.Fault{{Kind: elidotest.Forbidden}},
			requests: 1,
			err: []string{
				"HTTP 403 forbidden", "(request_id req_000001)",
				"the API key lacks the analytics:read scope: create a key with analytics:read",
			},
		},
		{
			name:     "404_not_retried",
			faults:   []elidotest.Fault{{Kind: elidotest.NotFound}},
			requests: 1,
			err:      []string{"HTTP 404 not_found", "check ELIDO_WORKSPACE_ID and ELIDO_API_BASE"},
		},
		{
			name:     "fault_on_another_endpoint_does_not_apply",
			faults:   []elidotest.Fault{{Kind: elidotest.ServerError, Endpoint: "timeseries"}},
			requests: 1,
		},
		{
			name: "faults_apply_in_turn",
			faults: []elidotest.Fault{
				{Kind: elidotest.RateLimited, Times: 1, RetryAfter: 4 * s},
				{Kind: elidotest.ServerError, Status: 503, Times: 1},
			},
			sleeps:   []time.Duration{4 * s, 1 * s}, // the backoff grows with the attempts, whatever failed before
			requests: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, novemberClicks(t), func(cfg *elido.Config) {
				if tt.maxAttempts > 0 {
					cfg.MaxAttempts = tt.maxAttempts
				}
			})
			f.srv.SetFaults(tt.faults...)
			got, err := f.client.Summary(t.Context(), from, to, time.UTC)
			if tt.err == nil {
				if err != nil {
					t.Fatal(err)
				}
				want := elido.Summary{From: from, To: to, TZ: "UTC", Clicks: 8, UniqueClicks: 4}
				if diff := gocmp.Diff(want, got); diff != "" {
					t.Errorf("Summary (-want +got):\n%s", diff)
				}
			} else {
				wantError(t, err, tt.err...)
			}
			if diff := gocmp.Diff(tt.sleeps, f.clock.Sleeps(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if n := f.srv.Requests()["summary"]; n != tt.requests {
				t.Errorf("the fake got %d requests, want %d", n, tt.requests)
			}
			if n := f.client.Requests()["summary"]; n != tt.requests {
				t.Errorf("the client counted %d requests, want %d", n, tt.requests)
			}
		})
	}
}

// TestDeadline: a wait that would end after the context's deadline is not
// started; the client gives up at once and says why.
func TestDeadline(t *testing.T) {
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")
	tests := []struct {
		name     string
		faults   []elidotest.Fault
		rate     int
		deadline time.Duration // from the fake clock's start
		calls    int
		sleeps   []time.Duration
		requests int
		err      []string
	}{
		{
			name:     "retry_after_past_the_deadline",
			faults:   []elidotest.Fault{{Kind: elidotest.RateLimited, RetryAfter: time.Minute}},
			deadline: 10 * time.Second,
			calls:    1,
			requests: 1,
			err: []string{
				"HTTP 429 rate_limited",
				"not retried: waiting 1m0s would pass the run's deadline, 10s away",
				"lower ELIDO_RATE_LIMIT or run later",
			},
		},
		{
			name:     "backoff_past_the_deadline",
			faults:   []elidotest.Fault{{Kind: elidotest.ServerError, Status: 503}},
			deadline: 1200 * time.Millisecond,
			calls:    1,
			sleeps:   []time.Duration{500 * time.Millisecond},
			requests: 2,
			err:      []string{"HTTP 503", "not retried: waiting 1s would pass the run's deadline, 700ms away"},
		},
		{
			name:     "retry_after_over_the_client_cap_without_deadline",
			faults:   []elidotest.Fault{{Kind: elidotest.RateLimited, RetryAfter: time.Hour}},
			calls:    1,
			requests: 1,
			err:      []string{"not retried: Elido asked to wait 1h0m0s, over the 15m0s the client waits"},
		},
		{
			name:     "own_rate_limit_past_the_deadline",
			rate:     1,
			deadline: 30 * time.Second,
			calls:    2,
			requests: 1,
			err:      []string{"the client-side rate limit (ELIDO_RATE_LIMIT) delays the request by 1m0s, past the run's deadline"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, novemberClicks(t), func(cfg *elido.Config) {
				if tt.rate > 0 {
					cfg.RatePerMinute = tt.rate
				}
			})
			f.srv.SetFaults(tt.faults...)
			ctx := t.Context()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, f.clock.Now().Add(tt.deadline))
				defer cancel()
			}
			var err error
			for range tt.calls {
				_, err = f.client.Summary(ctx, from, to, time.UTC)
			}
			wantError(t, err, tt.err...)
			if diff := gocmp.Diff(tt.sleeps, f.clock.Sleeps(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if n := f.srv.Requests()["summary"]; n != tt.requests {
				t.Errorf("the fake got %d requests, want %d", n, tt.requests)
			}
		})
	}
}

// TestLimiterSpacing: the client waits on its own limiter before each
// request, on its clock, so spacing shows in the waits, not in wall time.
func TestLimiterSpacing(t *testing.T) {
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")
	tests := []struct {
		name   string
		rate   int
		faults []elidotest.Fault
		calls  int
		sleeps []time.Duration
	}{
		{"60_per_minute_is_one_a_second", 60, nil, 4, []time.Duration{time.Second, time.Second, time.Second}},
		{"120_per_minute", 120, nil, 3, []time.Duration{500 * time.Millisecond, 500 * time.Millisecond}},
		{"30_per_minute", 30, nil, 2, []time.Duration{2 * time.Second}},
		{"first_request_does_not_wait", 60, nil, 1, nil},
		{
			name:   "retry_after_covers_the_limiter_wait",
			rate:   60,
			faults: []elidotest.Fault{{Kind: elidotest.RateLimited, Times: 1, RetryAfter: 7 * time.Second}},
			calls:  1,
			sleeps: []time.Duration{7 * time.Second},
		},
		{
			name:   "short_backoff_then_the_limiter",
			rate:   60,
			faults: []elidotest.Fault{{Kind: elidotest.ServerError, Times: 1}},
			calls:  1,
			sleeps: []time.Duration{500 * time.Millisecond, 500 * time.Millisecond},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, novemberClicks(t), func(cfg *elido.Config) { cfg.RatePerMinute = tt.rate })
			f.srv.SetFaults(tt.faults...)
			for range tt.calls {
				if _, err := f.client.Summary(t.Context(), from, to, time.UTC); err != nil {
					t.Fatal(err)
				}
			}
			if diff := gocmp.Diff(tt.sleeps, f.clock.Sleeps(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSlowAnswers uses real, short request timeouts; it asserts outcomes,
// not durations.
func TestSlowAnswers(t *testing.T) {
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")
	slow := elidotest.Fault{Kind: elidotest.Slow, Delay: time.Minute}

	t.Run("slow_once_is_retried", func(t *testing.T) {
		// Long enough for the second, normal answer even on a loaded machine.
		f := newFixture(t, novemberClicks(t), func(cfg *elido.Config) { cfg.RequestTimeout = 500 * time.Millisecond })
		once := slow
		once.Times = 1
		f.srv.SetFaults(once)
		got, err := f.client.Timeseries(t.Context(), from, to, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Errorf("got %d days, want 3", len(got))
		}
		if n := f.client.Requests()["timeseries"]; n != 2 {
			t.Errorf("made %d requests, want 2", n)
		}
	})
	t.Run("slow_always_gives_up", func(t *testing.T) {
		f := newFixture(t, novemberClicks(t), func(cfg *elido.Config) {
			cfg.RequestTimeout = 50 * time.Millisecond
			cfg.MaxAttempts = 2
		})
		f.srv.SetFaults(slow)
		_, err := f.client.Timeseries(t.Context(), from, to, time.UTC)
		wantError(t, err, "elido: GET timeseries 2026-11-26..2026-11-28: gave up after 2 attempts",
			"no answer within the request timeout of 50ms")
	})
	t.Run("run_deadline_during_a_request_is_not_retried", func(t *testing.T) {
		f := newFixture(t, novemberClicks(t), nil)
		f.srv.SetFaults(slow)
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := f.client.Timeseries(ctx, from, to, time.UTC)
		wantError(t, err, "elido: GET timeseries 2026-11-26..2026-11-28: the run was cancelled or reached its deadline")
		if n := f.client.Requests()["timeseries"]; n != 1 {
			t.Errorf("made %d requests, want 1", n)
		}
	})
}

func TestNetworkErrorsAreRetried(t *testing.T) {
	f := newFixture(t, nil, func(cfg *elido.Config) { cfg.MaxAttempts = 3 })
	f.srv.Close() // nothing listens any more
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")
	_, err := f.client.Timeseries(t.Context(), from, to, time.UTC)
	wantError(t, err, "elido: GET timeseries 2026-11-26..2026-11-28: gave up after 3 attempts", "connect")
	if diff := gocmp.Diff([]time.Duration{500 * time.Millisecond, time.Second}, f.clock.Sleeps()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if n := f.client.Requests()["timeseries"]; n != 3 {
		t.Errorf("counted %d attempts, want 3", n)
	}
}

func TestConcurrentUse(t *testing.T) {
	// One call may meet all five 503s in a row: a sixth attempt is its due.
	f := newFixture(t, novemberClicks(t), func(cfg *elido.Config) { cfg.MaxAttempts = 6 })
	f.srv.SetFaults(elidotest.Fault{Kind: elidotest.ServerError, Status: 503, Times: 5})
	from, to := date(t, "2026-11-26"), date(t, "2026-11-28")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Go(func() {
			_, err := f.client.Summary(t.Context(), from, to, time.UTC)
			errs <- err
		})
		wg.Go(func() {
			_, err := f.client.Timeseries(t.Context(), from, to, time.UTC)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if diff := gocmp.Diff(f.srv.Requests(), f.client.Requests()); diff != "" {
		t.Errorf("client and fake disagree on requests (-fake +client):\n%s", diff)
	}
	if got := sum(f.client.Requests()); got != 16+5 {
		t.Errorf("made %d requests, want 21 (16 calls, 5 retries)", got)
	}
}

// TestRetryAfterSources checks where a 429's wait comes from, with answers
// the fake does not give: Retry-After as an HTTP date, X-RateLimit-Reset
// as seconds left, which header wins, and no hint at all.
func TestRetryAfterSources(t *testing.T) {
	type answer struct {
		headers map[string]string
		body    string
	}
	tests := []struct {
		name string
		// answer builds the 429, given the client's clock.
		answer func(now time.Time) answer
		sleeps []time.Duration
	}{
		{
			name: "retry_after_http_date",
			answer: func(now time.Time) answer {
				return answer{headers: map[string]string{"Retry-After": now.Add(9 * time.Second).UTC().Format(http.TimeFormat)}}
			},
			sleeps: []time.Duration{9 * time.Second},
		},
		{
			name: "retry_after_date_in_the_past_retries_at_once",
			answer: func(now time.Time) answer {
				return answer{headers: map[string]string{"Retry-After": now.Add(-time.Hour).UTC().Format(http.TimeFormat)}}
			},
			sleeps: []time.Duration{0, 10 * time.Microsecond}, // a zero wait leaves the limiter's spacing to wait
		},
		{
			name: "retry_after_wins_over_reset_and_body",
			answer: func(now time.Time) answer {
				return answer{
					headers: map[string]string{"Retry-After": "4", "X-RateLimit-Reset": fmt.Sprint(now.Add(time.Minute).Unix())},
					body:    `{"error":"rate_limited","message":"slow down","retry_after_seconds":30}`,
				}
			},
			sleeps: []time.Duration{4 * time.Second},
		},
		{
			name: "reset_wins_over_body",
			answer: func(now time.Time) answer {
				return answer{
					headers: map[string]string{"X-RateLimit-Reset": fmt.Sprint(now.Add(6 * time.Second).Unix())},
					body:    `{"error":"rate_limited","message":"slow down","retry_after_seconds":30}`,
				}
			},
			sleeps: []time.Duration{6 * time.Second},
		},
		{
			name: "small_reset_is_seconds_left",
			answer: func(time.Time) answer {
				return answer{headers: map[string]string{"X-RateLimit-Reset": "15"}}
			},
			sleeps: []time.Duration{15 * time.Second},
		},
		{
			name: "fractional_retry_after_seconds_in_body",
			answer: func(time.Time) answer {
				return answer{body: `{"error":"rate_limited","message":"slow down","retry_after_seconds":1.5}`}
			},
			sleeps: []time.Duration{1500 * time.Millisecond},
		},
		{
			name: "unreadable_hints_back_off",
			answer: func(time.Time) answer {
				return answer{headers: map[string]string{"Retry-After": "soon", "X-RateLimit-Reset": "-1"}, body: "slow down"}
			},
			sleeps: []time.Duration{500 * time.Millisecond},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var clk *clock
			var mu sync.Mutex
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				calls++
				first, now := calls == 1, clk.Now()
				mu.Unlock()
				if first {
					a := tt.answer(now)
					for k, v := range a.headers {
						w.Header().Set(k, v)
					}
					w.WriteHeader(http.StatusTooManyRequests)
					w.Write([]byte(a.body))
					return
				}
				w.Write([]byte(`{"items":[{"country_code":"PL","clicks":1}]}`))
			}))
			t.Cleanup(srv.Close)
			mu.Lock()
			c, newClk := newClient(t, srv.URL, nil)
			clk = newClk
			mu.Unlock()
			got, err := c.CountryBreakdown(t.Context(), date(t, "2026-11-26"), date(t, "2026-11-28"), time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff([]elido.CountryCount{{"PL", 1}}, got); diff != "" {
				t.Errorf("CountryBreakdown (-want +got):\n%s", diff)
			}
			if diff := gocmp.Diff(tt.sleeps, clk.Sleeps()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}
