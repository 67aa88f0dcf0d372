package secret

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
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

// TestScrubCutRedactsBeforeCutting: a secret that straddles the cut must
// not leave its first part behind.
func TestScrubCutRedactsBeforeCutting(t *testing.T) {
	const key = "sk_live_0123456789abcdef"
	for at := 0; at < 60; at++ {
		err := fmt.Errorf("%s%s tail: %w", strings.Repeat("é", at/2)+strings.Repeat("x", at%2), key, context.Canceled)
		got := ScrubCut(err, 50, "[redacted]", key)
		if len(got.Error()) > 50 {
			t.Errorf("at %d: %d bytes, want at most 50", at, len(got.Error()))
		}
		if !utf8.ValidString(got.Error()) {
			t.Errorf("at %d: cut inside a character: %q", at, got)
		}
		if strings.Contains(got.Error(), key[:5]) {
			t.Errorf("at %d: %q shows the key's start", at, got)
		}
		if !errors.Is(got, context.Canceled) {
			t.Errorf("at %d: lost the chain", at)
		}
	}
	if got := ScrubCut(errors.New("short"), 50, "…", key).Error(); got != "short" {
		t.Errorf("short message changed: %q", got)
	}
}

func TestRedact(t *testing.T) {
	if got := Redact("a s3cret and s3cret-long", "…", "s3cret", "s3cret-long", ""); got != "a … and …" {
		t.Errorf("Redact = %q", got)
	}
}
