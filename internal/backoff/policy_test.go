package backoff

import (
	"context"
	"testing"
	"time"
)

func TestPolicy(t *testing.T) {
	t.Parallel()
	slack := Policy{Attempts: 4, Wait: time.Second, Doubling: true, MaxRetryAfter: 10 * time.Minute}
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second} {
		if got := slack.Backoff(attempt); got != want {
			t.Errorf("doubling: wait after attempt %d = %s, want %s", attempt, got, want)
		}
	}
	if !slack.Again(3) || slack.Again(4) {
		t.Error("four attempts: a fourth must follow the third, and none the fourth")
	}
	if !slack.Follows(10*time.Minute) || slack.Follows(11*time.Minute) {
		t.Error("a Retry-After up to MaxRetryAfter is followed, a longer one is not")
	}
	ping := Policy{Attempts: 3, Wait: time.Second}
	if ping.Backoff(3) != time.Second || ping.Follows(time.Second) {
		t.Error("a fixed wait stays the same, and without MaxRetryAfter no Retry-After is followed")
	}
	var slept time.Duration
	fake := Policy{Sleep: func(_ context.Context, d time.Duration) error { slept = d; return nil }}
	if err := fake.Pause(context.Background(), time.Hour); err != nil || slept != time.Hour {
		t.Errorf("Pause did not use the policy's Sleep: %v, %s", err, slept)
	}
}

func TestPolicyCapAndJitter(t *testing.T) {
	t.Parallel()
	p := Policy{Wait: 500 * time.Millisecond, Doubling: true, MaxWait: 30 * time.Second}
	for attempt, want := range map[int]time.Duration{1: 500 * time.Millisecond, 2: time.Second, 7: 30 * time.Second, 60: 30 * time.Second} {
		if got := p.Backoff(attempt); got != want {
			t.Errorf("capped: wait after attempt %d = %s, want %s", attempt, got, want)
		}
	}
	p.Jitter = func(ceiling time.Duration) time.Duration { return ceiling / 2 }
	if got := p.Backoff(2); got != 500*time.Millisecond {
		t.Errorf("jitter: wait after attempt 2 = %s, want half the ceiling, 500ms", got)
	}
	for range 100 {
		if d := FullJitter(time.Second); d < 0 || d > time.Second {
			t.Fatalf("FullJitter(1s) = %s, outside 0..1s", d)
		}
	}
}

func TestRetryStatus(t *testing.T) {
	t.Parallel()
	get := Policy{RateLimited: true, Unsure: []int{500, 502, 503, 504}, RepeatUnsure: true}
	post := Policy{RateLimited: true}
	ping := Policy{RepeatUnsure: true}
	for _, tt := range []struct {
		name       string
		p          Policy
		code       int
		repeatable bool
		want       bool
	}{
		{"get 429", get, 429, false, true},
		{"get 503", get, 503, false, true},
		{"get 501 not listed", get, 501, false, false},
		{"get 404", get, 404, false, false},
		{"post 429", post, 429, false, true},
		{"post 500", post, 500, false, false},
		{"post 500 of a repeatable call", post, 500, true, true},
		{"ping 429", ping, 429, false, false},
		{"ping 599", ping, 599, false, true},
	} {
		if got := tt.p.RetryStatus(tt.code, tt.repeatable); got != tt.want {
			t.Errorf("%s: RetryStatus = %v, want %v", tt.name, got, tt.want)
		}
	}
}
