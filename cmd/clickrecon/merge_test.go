package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/pgtest"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/storage"
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

// shard writes the report of one shard over from..to under dir, as a
// run would, with a loss of 7 clicks on 2026-10-03; it returns its folder.
func shard(t *testing.T, dir, from, to string) string {
	t.Helper()
	f, _ := reconcile.ParseDate(from)
	l, _ := reconcile.ParseDate(to)
	w := reconcile.Window{From: f, To: l, Loc: time.UTC}
	api, local := map[reconcile.Date]reconcile.Reading{}, map[reconcile.Date]reconcile.Reading{}
	for _, d := range w.Days() {
		api[d], local[d] = reconcile.Known(100), reconcile.Known(100)
		if d.String() == "2026-10-03" {
			local[d] = reconcile.Known(93)
		}
	}
	res := reconcile.Compare(reconcile.Input{Window: w, Now: testNow, Tolerance: reconcile.Tolerance{FailAbs: 5}, API: api, Local: local})
	r := report.New(res, w, report.Meta{RunKey: report.RunKey("48213", w, "store"), WorkspaceID: "48213",
		StoreID: report.StoreID("store"), GeneratedAt: testNow, Drilldown: report.Drilldown{Mode: report.DrillOff}})
	out, err := storage.Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// editShard rewrites the report.json in folder after edit.
func editShard(t *testing.T, folder string, edit func(*report.Report)) {
	t.Helper()
	r, err := storage.ReadReport(t.Context(), folder)
	if err != nil {
		t.Fatal(err)
	}
	edit(&r)
	b, err := report.JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "report.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// merge refuses shards whose days were edited after they were written:
// exit 2, the shard and the day named, no merged report written.
func TestMergeRefusesEditedShards(t *testing.T) {
	tests := []struct {
		name string
		edit func(first, second *report.Report)
		bad  int // which shard is named: 0 or 1
		want string
	}{
		{"two_days_and_their_gap_deleted", func(a, _ *report.Report) {
			a.Days = append(a.Days[:1], a.Days[3:]...)
			a.Totals.API, a.Totals.Local, a.Totals.Delta = 200, 200, 0
			a.Coverage.Days, a.Coverage.Missing = 2, 0
		}, 0, "day 2026-10-02 is missing"},
		{"day_copied_from_the_next_shard", func(a, b *report.Report) {
			a.Days = append(a.Days, b.Days[0])
			a.Totals.API += 100
			a.Totals.Local += 100
		}, 0, "day 2026-10-05 is outside its window"},
		{"day_listed_twice", func(_, b *report.Report) {
			b.Days = append([]report.Day{b.Days[0]}, b.Days...)
		}, 1, "day 2026-10-05 is listed twice"},
		{"totals_edited", func(a, _ *report.Report) {
			a.Totals.Local, a.Totals.Delta = a.Totals.API, 0
		}, 0, "not the sum of its days"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			shards := []string{shard(t, dir, "2026-10-01", "2026-10-04"), shard(t, dir, "2026-10-05", "2026-10-07")}
			var a, b report.Report
			editShard(t, shards[0], func(r *report.Report) { a = *r })
			editShard(t, shards[1], func(r *report.Report) { b = *r })
			tt.edit(&a, &b)
			editShard(t, shards[0], func(r *report.Report) { *r = a })
			editShard(t, shards[1], func(r *report.Report) { *r = b })
			merged := filepath.Join(t.TempDir(), "merged")
			code, stdout, stderr := runMerge(t, "--report-dir", merged, shards[0], shards[1])
			if code != exitUsage || !strings.Contains(stderr, "shard "+shards[tt.bad]) || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want 2 naming shard %s and %q\nstdout: %s\nstderr: %s", code, shards[tt.bad], tt.want, stdout, stderr)
			}
			if _, err := os.Stat(merged); !os.IsNotExist(err) {
				t.Errorf("a merged report was written (%v)", err)
			}
		})
	}
}

// merge reading s3:// shards from an endpoint that answers 307 to another
// origin (another port of the same host): nothing reaches that origin,
// the AWS signature least of all, its answer is never read as a shard,
// and merge exits 2 with nothing written.
func TestMergeFromS3RedirectedElsewhere(t *testing.T) {
	newS3(t, "x") // the AWS settings of the test
	var mu sync.Mutex
	var reached []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached = append(reached, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte(`{"schema_version":1,"window":{"from":"2026-10-01","to":"2026-10-01","tz":"UTC"},"days":[]}`))
	}))
	t.Cleanup(other.Close)
	s3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(s3.Close)
	q := url.Values{"endpoint": {s3.URL}, "use_path_style": {"true"}, "region": {"eu-central-1"}}.Encode()
	merged := filepath.Join(t.TempDir(), "merged")
	code, stdout, stderr := runMerge(t, "--report-dir", merged, "s3://reports/a?"+q, "s3://reports/b?"+q)
	if code != exitUsage || !strings.Contains(stderr, "redirect") {
		t.Errorf("exit %d, want 2 naming the redirect\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "AWS4-HMAC") || strings.Contains(stdout, "AWS4-HMAC") {
		t.Errorf("the signature is in the output:\n%s%s", stdout, stderr)
	}
	mu.Lock()
	if len(reached) != 0 {
		t.Errorf("the other origin got %d requests, the first with Authorization %q", len(reached), reached[0])
	}
	mu.Unlock()
	if _, err := os.Stat(merged); !os.IsNotExist(err) {
		t.Errorf("a merged report was written (%v)", err)
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

// merge reading s3:// shards from a bucket that refuses (403), or whose
// connection closes before it answers: no shard is read, nothing is
// written, and the exit code says whether a rerun can help.
func TestMergeFromS3ThatRefuses(t *testing.T) {
	for _, tt := range []struct {
		name     string
		answer   http.HandlerFunc
		wantCode int
	}{
		{"refused", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>denied</Message></Error>`))
		}, exitUsage},
		// The request reached the bucket and its answer never came back.
		{"answer_lost", func(w http.ResponseWriter, r *http.Request) {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		}, exitUsage},
	} {
		t.Run(tt.name, func(t *testing.T) {
			newS3(t, "x") // the AWS settings of the test
			var mu sync.Mutex
			asked := 0
			bucket := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				asked++
				mu.Unlock()
				tt.answer(w, r)
			}))
			t.Cleanup(bucket.Close)
			q := url.Values{"endpoint": {bucket.URL}, "use_path_style": {"true"}, "region": {"eu-central-1"}}.Encode()
			merged := filepath.Join(t.TempDir(), "merged")
			code, stdout, stderr := runMerge(t, "--report-dir", merged, "s3://reports/a?"+q, "s3://reports/b?"+q)
			if code != tt.wantCode || !strings.Contains(stderr, "s3://reports/a") {
				t.Errorf("exit %d, want %d naming the shard\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			if strings.Contains(stderr+stdout, "AWS4-HMAC") || strings.Contains(stderr+stdout, "use_path_style") {
				t.Errorf("the signature or the URL's query is in the output:\n%s%s", stdout, stderr)
			}
			mu.Lock()
			if asked == 0 {
				t.Error("the bucket was never asked: the fault was not met")
			}
			mu.Unlock()
			if _, err := os.Stat(merged); !os.IsNotExist(err) {
				t.Errorf("a merged report was written (%v)", err)
			}
		})
	}
}
