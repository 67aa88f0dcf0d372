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
	// The short secret comes first but must not break the long one.
	long := errors.New("dial tcp: lookup host s3cr@ss#1: no such host")
	if got := Scrub(long, "xxxxx", "s3cr", "s3cr@ss#1").Error(); got != "dial tcp: lookup host xxxxx: no such host" {
		t.Errorf("message %q", got)
	}
	if Scrub(nil, "…", "x") != nil {
		t.Error("nil became an error")
	}
}

func TestURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"https://slack.com/api/", "https://slack.com/api/"},
		{"https://user:hunter2@proxy.example/api/?token=xoxb-1", "https://user:xxxxx@proxy.example/api/"},
		{"://bad", "(unparsable)"},
	} {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
