// Package backoff holds the wait the clients share between retries: one
// that ends early, with the context's error, when the context does. Each
// client takes it as a default that tests replace.
package backoff

import (
	"context"
	"time"
)

// Sleep waits for d, or returns ctx's error as soon as ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
