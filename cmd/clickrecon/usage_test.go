package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// version refuses a flag or an operand as every other command does: exit
// 2 with its usage on stderr, nothing on stdout; -h prints the usage.
func TestVersionRefusesFlagsAndOperands(t *testing.T) {
	for _, tt := range []struct {
		args        []string
		code        int
		out, errOut string // what stdout and stderr must contain ("": must be empty)
	}{
		{[]string{"version"}, exitOK, "clickrecon dev (commit none)\n", ""},
		{[]string{"--version"}, exitOK, "clickrecon dev (commit none)\n", ""},
		{[]string{"version", "--help"}, exitOK, "Usage: clickrecon version", ""},
		{[]string{"version", "--x"}, exitUsage, "", "flag provided but not defined: -x"},
		{[]string{"version", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"--version", "extra"}, exitUsage, "", `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, envconfig.MapLookuper(nil), &stdout, &stderr)
		if code != tt.code || !contains(stdout.String(), tt.out) || !contains(stderr.String(), tt.errOut) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				tt.args, code, stdout.String(), stderr.String(), tt.code, tt.out, tt.errOut)
		}
		if tt.code == exitUsage && !strings.Contains(stderr.String(), "Usage: clickrecon version") {
			t.Errorf("%q: stderr %q: want the usage", tt.args, stderr.String())
		}
	}
}

// contains is strings.Contains, except that want "" asks for nothing at all.
func contains(got, want string) bool {
	if want == "" {
		return got == ""
	}
	return strings.Contains(got, want)
}

// help COMMAND prints exactly what COMMAND --help prints, with a fleet
// file set or not (the help of check is one, not one per workspace);
// help of an unknown command exits 2 naming it.
func TestHelpCommandIsTheCommandsHelp(t *testing.T) {
	fleet := filepath.Join(t.TempDir(), "fleet.ini")
	if err := os.WriteFile(fleet, []byte("[acme]\nELIDO_WORKSPACE_ID = 1\n\n[b]\nELIDO_WORKSPACE_ID = 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exec := func(env map[string]string, args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := runWith(context.Background(), args, envconfig.MapLookuper(env), &stdout, &stderr,
			deps{now: func() time.Time { return testNow }})
		return code, stdout.String(), stderr.String()
	}
	for _, env := range []map[string]string{nil, {"RECON_FLEET_FILE": fleet}} {
		for _, cmd := range commands {
			code, out, errOut := exec(env, "help", cmd)
			wantCode, want, _ := exec(env, cmd, "--help")
			if code != exitOK || wantCode != exitOK || out != want || errOut != "" {
				t.Errorf("%v help %s: exit %d, stderr %q, stdout %q; want exit 0 and what %s --help prints (exit %d): %q",
					env, cmd, code, errOut, out, cmd, wantCode, want)
			}
			if !strings.HasPrefix(out, "Usage: clickrecon "+cmd) {
				t.Errorf("%v help %s: %q: want the command's usage first", env, cmd, out)
			}
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "help"}} {
		if code, out, _ := exec(nil, args...); code != exitOK || out != usage {
			t.Errorf("%q: exit %d, %q: want 0 and the general help", args, code, out)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "bogus"}, `unknown command "bogus"`},
		{[]string{"help", "run", "extra"}, `unexpected argument "extra"`},
	} {
		if code, out, errOut := exec(nil, tt.args...); code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q: want exit 2 saying %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

// trend --help writes --nights's default as the number it is.
func TestTrendHelpNightsDefaultIsANumber(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"trend", "--help"}, envconfig.MapLookuper(nil), &stdout, &stderr); code != exitOK ||
		!strings.Contains(stdout.String(), "ending at --to (default 90)\n") {
		t.Errorf("trend --help: exit %d, %q: want --nights's default written 90", code, stdout.String())
	}
}
