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
	if got := Redact("a s3cret-pw and s3cret-pw-long", "…", "s3cret-pw", "s3cret-pw-long", ""); got != "a … and …" {
		t.Errorf("Redact = %q", got)
	}
}

// TestRedactKeepsWords: a short password is not searched for in free
// text, so no word that contains it changes, whatever it is; where it has
// a place (a URL's or DSN's password) it is removed all the same.
func TestRedactKeepsWords(t *testing.T) {
	t.Parallel()
	const msg = `pq: role "x" does not exist`
	for _, pw := range []string{"x", "role", "does", "exist", "pq", " ", `"`, "o", "s n", "nosuchus"[:7]} {
		if got := Redact(msg, "xxxxx", pw); got != msg {
			t.Errorf("password %q: %q, want the message unchanged", pw, got)
		}
		dsn := "postgres://recon:" + pw + "@db:5432/clicks"
		for _, text := range []string{
			`parse "` + dsn + `": ` + msg,
			"dial " + dsn + ": " + msg,
		} {
			got := Redact(text, "xxxxx", pw)
			if strings.Contains(got, ":"+pw+"@") || !strings.Contains(got, "postgres://recon:xxxxx@db:5432/clicks") {
				t.Errorf("password %q: %q keeps the DSN's password", pw, got)
			}
			if !strings.HasSuffix(got, msg) {
				t.Errorf("password %q: %q changed the words", pw, got)
			}
		}
	}
}

// TestRedactLongSecretInFreeText: a secret long enough to be told apart
// from words is hidden wherever it appears.
func TestRedactLongSecretInFreeText(t *testing.T) {
	t.Parallel()
	const key = "sk_live_0123456789"
	got := Redact("502 Bad Gateway: <p>your key "+key+" was refused</p>", "[redacted]", key)
	if strings.Contains(got, key) || got != "502 Bad Gateway: <p>your key [redacted] was refused</p>" {
		t.Errorf("Redact = %q", got)
	}
	if len("p4ssw0rd") != MinFreeText || Redact("login as p4ssw0rd failed", "…", "p4ssw0rd") != "login as … failed" {
		t.Error("a secret of MinFreeText characters is not hidden in free text")
	}
}

// TestRedactByStructure: what holds a secret by its place is hidden
// whether or not the secret is known.
func TestRedactByStructure(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"dial postgres://u:pw@db/x: refused", "dial postgres://u:xxxxx@db/x: refused"},
		{`parse "mysql://root:p/w@db:3306/x": invalid`, `parse "mysql://root:xxxxx@db:3306/x": invalid`},
		{"postgres://u:p@ss#1@db/x", "postgres://u:xxxxx@db/x"},
		{"GET https://api.example/v1/x?mail=a@b.c: 500", "GET https://api.example/v1/x?mail=a@b.c: 500"},
		{"GET https://api.example:8443/v1/x?mail=a@b.c: 500", "GET https://api.example:8443/v1/x?mail=a@b.c: 500"},
		{"open root:pw@tcp(db:3306)/x: refused", "open root:xxxxx@tcp(db:3306)/x: refused"},
		{"host=db user=u password=pw dbname=x", "host=db user=u password=xxxxx dbname=x"},
		{"host=db password='p w' dbname=x", "host=db password=xxxxx dbname=x"},
		{"PUT https://b.s3.example/k?X-Amz-Credential=AK%2F1&X-Amz-Signature=abc123&x-id=PutObject: 403",
			"PUT https://b.s3.example/k?X-Amz-Credential=xxxxx&X-Amz-Signature=xxxxx&x-id=PutObject: 403"},
		{"GET https://acct.blob.example/c?sv=2024&sig=ab%2Bc: 403", "GET https://acct.blob.example/c?sv=2024&sig=xxxxx: 403"},
		{`{"ok":false,"token":"t0k","error":"invalid_auth"}`, `{"ok":false,"token":"xxxxx","error":"invalid_auth"}`},
		{"header map[Authorization:[Bearer abc.def]]", "header map[Authorization:[Bearer xxxxx]]"},
		{"Authorization: Basic dXNlcjpwdw==", "Authorization: Basic xxxxx"},
		{"echo: bearer abc123", "echo: bearer xxxxx"},
		{"token xoxb-1-2-abc invalid", "token xxxxx invalid"},
		{`Post "https://hooks.slack.com/services/T0/B0/abc": EOF`, `Post "https://hooks.slack.com/services/xxxxx": EOF`},
		{"run_key=ws-2026 status=missing", "run_key=ws-2026 status=missing"},
		{"401: missing bearer token", "401: missing bearer token"},
		{"401: authorization: the key is missing", "401: authorization: the key is missing"},
		{"X-Api-Key: k-123456", "X-Api-Key: xxxxx"},
	} {
		if got := Redact(tt.in, "xxxxx"); got != tt.want {
			t.Errorf("Redact(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
	// Already redacted stays as it is, whatever the mask.
	for _, mask := range []string{"xxxxx", "[redacted]", "…"} {
		in := "postgres://u:" + mask + "@db/x?password=" + mask + " " + `"token":"` + mask + `"`
		if got := Redact(in, mask); got != in {
			t.Errorf("mask %q: %q became %q", mask, in, got)
		}
	}
}

// FuzzRedact: a URL's password never survives, whatever its length; a
// secret of MinFreeText characters never survives anywhere; a text
// without a secret's place keeps a short secret's words.
func FuzzRedact(f *testing.F) {
	f.Add("pq: role %q does not exist", "x")
	f.Add("dial %s: refused", "hunter2-long")
	f.Add("%s", "p/w#1")
	f.Fuzz(func(t *testing.T, text, pw string) {
		if pw == "" || strings.ContainsAny(pw, "@ \t\n\r\"'`<>") || strings.Contains(pw, "xxxxx") {
			t.Skip()
		}
		in := text + " postgres://u:" + pw + "@db/x " + text
		got := Redact(in, "xxxxx", pw)
		if strings.Contains(got, ":"+pw+"@") {
			t.Errorf("%q: the DSN's password survived in %q", in, got)
		}
		if len(pw) >= MinFreeText && strings.Contains(got, pw) {
			t.Errorf("%q: the long secret survived in %q", in, got)
		}
	})
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

func TestRedactKnownPasswordWithAnAt(t *testing.T) {
	t.Parallel()
	got := Redact("dial postgres://u:p@s/s@db/x: refused", "xxxxx", "p@s/s")
	if got != "dial postgres://u:xxxxx@db/x: refused" {
		t.Errorf("Redact = %q", got)
	}
}
