package backoff

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"
)

// Policy is how a client retries one call. Each client configures its
// own, and what differs between them is stated here once: how many
// attempts, how the wait grows, whether it is jittered, whether a
// server's Retry-After is followed, which HTTP answers are retried, and
// whether a call the server may already have acted on is repeated.
//
// The clients that use it: the Elido client (sources/elido), the Slack
// transport (report/alert) and the healthcheck ping (report/monitor).
// Which transport failures may be retried at all is the client's to say
// (a refusal or a redirect never is: the same answer would come again);
// the policy says which statuses, how often, after how long, and what to
// do when the answer leaves open whether the server acted.
type Policy struct {
	// Attempts is the most attempts of one call, the first included.
	Attempts int
	// Wait is the wait after the first failed attempt. Doubling doubles
	// it after each further one (1 s, 2 s, 4 s); without it every wait
	// is Wait. MaxWait, when set, caps the doubled wait.
	Wait     time.Duration
	Doubling bool
	MaxWait  time.Duration
	// Jitter, when set, turns the wait (its ceiling) into the wait
	// actually taken; FullJitter takes a random one up to the ceiling.
	// Nil: the wait is taken as it is.
	Jitter func(ceiling time.Duration) time.Duration
	// MaxRetryAfter is the longest wait a server may ask for (a 429's
	// Retry-After) that is waited out; a longer one ends the call. 0: the
	// client does not read Retry-After.
	MaxRetryAfter time.Duration
	// RateLimited says whether a 429 is retried: the server did not act
	// on the request, so a repeat is always safe.
	RateLimited bool
	// Unsure lists the 5xx answers that may be retried; nil: every 5xx.
	// The server may have acted on such a request, so whether it is
	// repeated is RepeatUnsure's (or the call's) to say.
	Unsure []int
	// RepeatUnsure says whether a call the server may have acted on
	// without saying so (a 5xx, a timeout or a connection lost after the
	// request went) is sent again. True where a repeat is harmless (a
	// read, a ping, an edit, an upload); false where it is not: a post
	// must never appear twice, so such a failure ends it, and the caller
	// treats the post as unconfirmed.
	RepeatUnsure bool
	// Sleep waits between attempts; nil: Sleep. It must end early, with
	// ctx's error, when ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
}

// FullJitter is a random wait from 0 to ceiling, both included.
func FullJitter(ceiling time.Duration) time.Duration { return rand.N(ceiling + 1) }

// Backoff is the wait after the failed attempt (counted from 1): Wait,
// doubled per further attempt when Doubling, at most MaxWait when set,
// then jittered when Jitter is set.
func (p Policy) Backoff(attempt int) time.Duration {
	wait := p.Wait
	if p.Doubling {
		for i := 1; i < attempt && (p.MaxWait <= 0 || wait < p.MaxWait); i++ {
			wait *= 2
		}
	}
	if p.MaxWait > 0 {
		wait = min(wait, p.MaxWait)
	}
	if p.Jitter != nil {
		return p.Jitter(wait)
	}
	return wait
}

// Again reports whether another attempt may follow the failed attempt.
func (p Policy) Again(attempt int) bool { return attempt < p.Attempts }

// Follows reports whether a server's request to wait d (Retry-After) is
// waited out.
func (p Policy) Follows(d time.Duration) bool { return p.MaxRetryAfter > 0 && d <= p.MaxRetryAfter }

// RetryStatus reports whether an HTTP answer with status code is tried
// again: a 429 when RateLimited, a 5xx in Unsure when a repeat is allowed
// (RepeatUnsure, or repeatable: the call itself cannot act twice), and
// nothing else.
func (p Policy) RetryStatus(code int, repeatable bool) bool {
	switch {
	case code == http.StatusTooManyRequests:
		return p.RateLimited
	case code >= 500:
		if p.Unsure != nil && !slices.Contains(p.Unsure, code) {
			return false
		}
		return p.RepeatUnsure || repeatable
	}
	return false
}

// Pause waits d before the next attempt, or returns ctx's error as soon
// as ctx ends.
func (p Policy) Pause(ctx context.Context, d time.Duration) error {
	if p.Sleep == nil {
		return Sleep(ctx, d)
	}
	return p.Sleep(ctx, d)
}
