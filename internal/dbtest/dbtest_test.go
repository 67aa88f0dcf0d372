package dbtest

import (
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	test := "TestCounts/postgres_session_timezone_kiritimati/fall_back_day_has_25_hours_and_then_some"
	name := Name("pgtest", test)
	if len(name) > 63 { // PostgreSQL's limit; MySQL's is 64
		t.Errorf("name %q is longer than 63 bytes", name)
	}
	if strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		t.Errorf("name %q needs quoting", name)
	}
	if !strings.HasPrefix(name, "pgtest_") || !strings.Contains(name, "has_25_hours_and_then_some") {
		t.Errorf("name %q does not say which test it belongs to", name)
	}
	if name == Name("pgtest", test) {
		t.Errorf("two names for one test are equal: %q", name)
	}
}

func TestUnavailable(t *testing.T) {
	for _, tt := range []struct {
		name                    string
		ci                      string
		wantSkipped, wantFailed bool
	}{
		{name: "skips_locally", ci: "", wantSkipped: true},
		{name: "fails_in_ci", ci: "true", wantFailed: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			r := &Recorder{TB: t}
			r.Call(func(t testing.TB) {
				Unavailable(t, "pgtest", "PostgreSQL", "PGTEST_DSN", "postgres://127.0.0.1:1/test", nil)
			})
			if r.Returned || r.DidSkip != tt.wantSkipped || r.DidFail != tt.wantFailed {
				t.Errorf("returned = %v, skipped = %v, failed = %v; want false, %v, %v",
					r.Returned, r.DidSkip, r.DidFail, tt.wantSkipped, tt.wantFailed)
			}
			if !strings.Contains(r.Msg, "127.0.0.1:1") || !strings.Contains(r.Msg, "PostgreSQL") {
				t.Errorf("message %q should name the server", r.Msg)
			}
		})
	}
}
