// Package dbtest holds what the real-server test helpers (pgtest,
// mysqltest) share: how a test meets a server that does not answer, how
// a test's own schema or database is named, and how it is made and
// dropped around the test (Fresh).
package dbtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// Parsed returns what parse (store.ParseDSN, history.ParseDSN...) reads
// of rawDSN, the value a store or history is opened with, and ends t when
// it does not parse.
func Parsed(t testing.TB, parse func(string) (dsn.Target, error), rawDSN string) dsn.Target {
	t.Helper()
	target, err := parse(rawDSN)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// Unavailable ends t because the server at where (a DSN already redacted)
// did not answer: it skips, unless CI is set (to anything non-empty), when
// it fails, so that CI never passes by skipping. helper names the calling
// package, server the kind of server and envVar the variable that points
// the tests at another one.
func Unavailable(t testing.TB, helper, server, envVar, where string, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s: %s at %s is unreachable and CI is set, so this test may not skip: %v", helper, server, where, err)
		return
	}
	t.Skipf("%s: skipping, %s at %s is unreachable (start it or set %s): %v", helper, server, where, envVar, err)
}

// Name returns a new schema or database name, prefix_<test>_<8 hex>, that
// says which test it belongs to and needs no quoting: the test's name is
// lowered, anything but a letter or digit becomes '_', and only its last
// 40 characters are kept, so that the name stays within PostgreSQL's 63
// bytes and MySQL's 64 characters.
func Name(prefix, test string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(test) {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	return fmt.Sprintf("%s_%s_%08x", prefix, name, rand.Uint32())
}

// Recorder is a testing.TB whose Skipf and Fatalf record instead of ending
// the real test, for the helpers' own tests of Unavailable's use.
type Recorder struct {
	testing.TB
	DidSkip, DidFail, Returned bool
	Msg                        string
}

func (r *Recorder) Helper() {}

func (r *Recorder) Skipf(format string, args ...any) {
	r.DidSkip, r.Msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *Recorder) Fatalf(format string, args ...any) {
	r.DidFail, r.Msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// Call runs f(r) on a goroutine of its own, so that r's Skipf or Fatalf
// can end it, and says whether f returned.
func (r *Recorder) Call(f func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
		r.Returned = true
	}()
	<-done
}

// CheckUnreachable tests a helper's New against a server that does not
// answer: envVar set to unreachable (a DSN on 127.0.0.1:1 whose password
// is password), New must skip the test locally and fail it under CI,
// never return, and name the server without its password.
func CheckUnreachable(t *testing.T, envVar, unreachable, password string, newDB func(testing.TB)) {
	for _, tt := range []struct {
		name                    string
		ci                      string
		wantSkipped, wantFailed bool
	}{
		{name: "skips_locally", ci: "", wantSkipped: true},
		{name: "fails_in_ci", ci: "true", wantFailed: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envVar, unreachable)
			t.Setenv("CI", tt.ci)
			r := &Recorder{TB: t}
			r.Call(newDB)
			if r.Returned {
				t.Fatal("New returned on an unreachable server")
			}
			if r.DidSkip != tt.wantSkipped || r.DidFail != tt.wantFailed {
				t.Errorf("skipped = %v, failed = %v; want %v, %v", r.DidSkip, r.DidFail, tt.wantSkipped, tt.wantFailed)
			}
			if !strings.Contains(r.Msg, "127.0.0.1:1") || strings.Contains(r.Msg, password) {
				t.Errorf("message %q should name the server without its password", r.Msg)
			}
		})
	}
}
