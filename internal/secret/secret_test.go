package secret

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestScrub(t *testing.T) {
	err := fmt.Errorf("dial postgres://u:hunter2@db/x: %w", context.DeadlineExceeded)
	got := Scrub(err, "xxxxx", "", "hunter2")
	if got.Error() != "dial postgres://u:xxxxx@db/x: context deadline exceeded" {
		t.Errorf("message %q", got.Error())
	}
	if !errors.Is(got, context.DeadlineExceeded) {
		t.Error("the scrubbed error lost its chain")
	}
	if plain := errors.New("nothing secret"); Scrub(plain, "…", "hunter2") != plain {
		t.Error("an error without a secret was wrapped")
	}
	if Scrub(nil, "…", "x") != nil {
		t.Error("nil became an error")
	}
}
