package backoff

import (
	"context"
	"time"
)

// Policy is how a client retries one call. Each client configures its
// own, and what differs between them is stated here once: how many
// attempts, how the wait grows, whether a server's Retry-After is
// followed, and whether a call the server may already have acted on is
// repeated.
//
// Which failures may be retried at all is the client's to say (a refusal
// never is: the same answer would come again); the policy says how often,
// after how long, and what to do when the answer leaves open whether the
// server acted.
type Policy struct {
	// Attempts is the most attempts of one call, the first included.
	Attempts int
	// Wait is the wait after the first failed attempt. Doubling doubles
	// it after each further one (1 s, 2 s, 4 s); without it every wait
	// is Wait.
	Wait     time.Duration
	Doubling bool
	// MaxRetryAfter is the longest wait a server may ask for (a 429's
	// Retry-After) that is waited out; a longer one ends the call. 0: the
	// client does not read Retry-After.
	MaxRetryAfter time.Duration
	// RepeatUnsure says whether a call the server may have acted on
	// without saying so (a 5xx, a timeout or a connection lost after the
	// request went) is sent again. True where a repeat is harmless (a
	// ping, an edit, an upload); false where it is not: a post must never
	// appear twice, so such a failure ends it, and the caller treats the
	// post as unconfirmed.
	RepeatUnsure bool
	// Sleep waits between attempts; nil: Sleep. It must end early, with
	// ctx's error, when ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Backoff is the wait after the failed attempt (counted from 1).
func (p Policy) Backoff(attempt int) time.Duration {
	if !p.Doubling || attempt <= 1 {
		return p.Wait
	}
	return p.Wait << (attempt - 1)
}

// Again reports whether another attempt may follow the failed attempt.
func (p Policy) Again(attempt int) bool { return attempt < p.Attempts }

// Follows reports whether a server's request to wait d (Retry-After) is
// waited out.
func (p Policy) Follows(d time.Duration) bool { return p.MaxRetryAfter > 0 && d <= p.MaxRetryAfter }

// Pause waits d before the next attempt, or returns ctx's error as soon
// as ctx ends.
func (p Policy) Pause(ctx context.Context, d time.Duration) error {
	if p.Sleep == nil {
		return Sleep(ctx, d)
	}
	return p.Sleep(ctx, d)
}
