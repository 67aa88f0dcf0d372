package secret

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
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

func TestFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	if err := os.WriteFile(key, []byte("s3cr3t\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		env  map[string]string
		want map[string]string
		err  string
	}{
		{"file_trimmed", map[string]string{"KEY_FILE": key}, map[string]string{"KEY": "s3cr3t"}, ""},
		{"empty_value_does_not_hide_the_file", map[string]string{"KEY": "", "KEY_FILE": key}, map[string]string{"KEY": "s3cr3t"}, ""},
		{"neither", map[string]string{}, map[string]string{}, ""},
		{"both", map[string]string{"KEY": "x", "KEY_FILE": key}, nil, "both KEY and KEY_FILE are set"},
		{"missing_file", map[string]string{"KEY_FILE": filepath.Join(dir, "absent")}, nil, "KEY_FILE=" + filepath.Join(dir, "absent") + ": cannot read the secret file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Files(func(n string) (string, bool) { v, ok := tt.env[n]; return v, ok }, []string{"KEY"})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
