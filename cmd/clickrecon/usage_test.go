package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
)

// An operand given to a command that takes flags only is the one thing
// said, whatever the flags and variables: exit 2, one line naming it, and
// nothing else read or checked.
func TestStrayOperandIsTheOnlyError(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--date", "2026-11-01", "--fail-on", "warn", "extra"},
		{"check", "--offline", "extra"},
		{"repair", "--date", "2026-11-01", "extra"},
		{"trend", "--by", "day", "extra"},
		{"migrate", "extra"},
		{"demo", "extra"},
	} {
		var stdout, stderr bytes.Buffer
		code := runWith(context.Background(), args, envconfig.MapLookuper(nil), &stdout, &stderr,
			deps{now: func() time.Time { return testNow }})
		want := fmt.Sprintf("clickrecon: unexpected argument \"extra\": clickrecon %s takes flags only (see --help)\n", args[0])
		if code != exitUsage || stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout and stderr %q", args, code, stdout.String(), stderr.String(), want)
		}
	}
}
