package elido

import "time"

// SetJitter replaces the random full jitter, so that tests know the
// backoff waits: f gets the ceiling and returns the wait.
func SetJitter(c *Client, f func(ceiling time.Duration) time.Duration) { c.retry.Jitter = f }

// SetMaxBody replaces the 32 MiB cap on a response body.
func SetMaxBody(c *Client, n int64) { c.maxBody = n }
