package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
)

// The demo ends by repairing its lost burst into its own store, and the
// re-count says the day matches; the duplicated batch is left alone.
func TestDemoRepairsTheLostBurst(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), []string{"demo", "--report-dir", dir}, envconfig.MapLookuper(nil), &stdout, &stderr,
		deps{now: func() time.Time { return testNow }})
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"63 clicks to restore on 2026-10-24, 02:00 CEST–03:00 CEST",
		"2026-10-25: not missing: the store has 12 clicks more than Elido (surplus is never deleted)",
		"restored 63 clicks on 2026-10-24, 02:00 CEST–03:00 CEST; the day now matches",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "repair-*", "repair.csv"))
	if len(paths) != 1 {
		t.Fatalf("repair.csv: %v", paths)
	}
	b, _ := os.ReadFile(paths[0])
	if lines := strings.Count(string(b), "\n"); lines != 64 {
		t.Errorf("repair.csv has %d lines, want a header and 63 clicks", lines)
	}
}
