package flaghelp

import (
	"bytes"
	"flag"
	"strings"
	"testing"
	"time"
)

// A text default is quoted; a number's, a duration's or a bool's is
// written as the flag takes it.
func TestPrintQuotesTextDefaultsOnly(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("by", "week", "the periods")
	fs.String("nights-text", "90", "a number held as text")
	fs.Int("nights", 90, "how many days")
	fs.Duration("settle", 2*time.Hour, "how long")
	fs.Bool("dry-run", true, "post nothing")
	var out bytes.Buffer
	Print(&out, fs, true)
	for _, want := range []string{`the periods (default "week")`, `a number held as text (default "90")`,
		"how many days (default 90)\n", "how long (default 2h0m0s)\n", "post nothing (default true)\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help %q: want %q", out.String(), want)
		}
	}
}
