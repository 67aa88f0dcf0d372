package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	t.Parallel()
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("a short sleep: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("a sleep in an ended context: %v, want context.Canceled", err)
	}
}
