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
