package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/report"
)

func runMerge(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), append([]string{"merge"}, args...), envconfig.MapLookuper(nil), &stdout, &stderr,
		deps{now: func() time.Time { return testNow }})
	return code, stdout.String(), stderr.String()
}

// Two shards of a window, merged, report the same days as one run over
// the window.
func TestMergeShardsOfARun(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	window := []string{"--from", "2026-10-24", "--to", "2026-10-26"}
	shardDir, wholeDir := filepath.Join(t.TempDir(), "shards"), filepath.Join(t.TempDir(), "whole")
	var keys []string
	for _, shard := range []string{"0/2", "1/2"} {
		r := f.run(append(window, "--shard", shard, "--report-dir", shardDir, "--format", "json")...)
		if r.code != exitOK {
			t.Fatalf("shard %s: exit %d\n%s", shard, r.code, r.stderr)
		}
		var out struct {
			ReportDir string `json:"report_dir"`
		}
		json.Unmarshal([]byte(r.stdout), &out)
		keys = append(keys, out.ReportDir)
	}
	if r := f.run(append(window, "--report-dir", wholeDir)...); r.code != exitOK {
		t.Fatalf("whole window: exit %d", r.code)
	}
	code, stdout, stderr := runMerge(t, "--report-dir", filepath.Join(t.TempDir(), "merged"), "--format", "json", keys[1], filepath.Join(keys[0], "report.json"))
	if code != exitOK {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	var merged report.Report
	if err := json.Unmarshal([]byte(stdout), &merged); err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(wholeDir, "*", "report.json"))
	b, _ := os.ReadFile(paths[0])
	var whole report.Report
	json.Unmarshal(b, &whole)
	if diff := cmp.Diff(whole.Days, merged.Days); diff != "" {
		t.Errorf("days (-one run +merged shards):\n%s", diff)
	}
	if diff := cmp.Diff(whole.Links, merged.Links); diff != "" {
		t.Errorf("links (-one run +merged shards):\n%s", diff)
	}
	if merged.Window != whole.Window || merged.Totals.Delta != whole.Totals.Delta || merged.Status != whole.Status {
		t.Errorf("merged window %+v, delta %d, status %s; one run: %+v, %d, %s",
			merged.Window, merged.Totals.Delta, merged.Status, whole.Window, whole.Totals.Delta, whole.Status)
	}

	if code, _, stderr := runMerge(t, keys[0]); code != exitUsage || !strings.Contains(stderr, "at least two") {
		t.Errorf("one report: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runMerge(t, keys[0], keys[0]); code != exitUsage || !strings.Contains(stderr, "overlap") {
		t.Errorf("the same shard twice: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runMerge(t, keys[0], filepath.Join(t.TempDir(), "nothing")); code != exitUsage || !strings.Contains(stderr, "read report") {
		t.Errorf("a missing report: exit %d, %q", code, stderr)
	}
}

// migrate: a HISTORY_DSN no retry can mend exits 2; running it twice is
// harmless.
func TestMigrate(t *testing.T) {
	run := func(env map[string]string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := runWith(context.Background(), []string{"migrate"}, envconfig.MapLookuper(env), &stdout, &stderr, deps{now: time.Now})
		return code, stdout.String() + stderr.String()
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "history.db")
	if code, out := run(map[string]string{"HISTORY_DSN": db}); code != exitOK || !strings.Contains(out, "applied 001_history") {
		t.Errorf("first migrate: exit %d, %q", code, out)
	}
	if code, out := run(map[string]string{"HISTORY_DSN": db}); code != exitOK || !strings.Contains(out, "up to date") {
		t.Errorf("second migrate: exit %d, %q", code, out)
	}
	_, base := pgtest.New(t) // a server that answers (or skip, or fail in CI)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/no_such_db_for_clickrecon"
	for name, dsn := range map[string]string{
		"missing_folder":   "sqlite:" + filepath.Join(t.TempDir(), "no", "such", "history.db"),
		"unset":            "",
		"unknown_database": u.String(),
	} {
		if code, out := run(map[string]string{"HISTORY_DSN": dsn}); code != exitUsage {
			t.Errorf("%s: exit %d, want 2: %q", name, code, out)
		}
	}
}
