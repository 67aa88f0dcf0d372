package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/s3test"
)

// trend over a bucket that refuses (403) or closes every connection
// before it answers (the answer lost) exits 3, prints nothing on stdout
// (no trend of a part of the nights) and names the bucket, without its
// query, on stderr.
func TestTrendOfABucketThatFails(t *testing.T) {
	for name, fail := range map[string]http.HandlerFunc{
		"refused": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>denied</Message></Error>`))
		},
		"answer_lost": func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, _ := s3test.Start(t, "nightly", s3test.Options{Wrap: func(http.Handler) http.Handler { return fail }})
			var stdout, stderr bytes.Buffer
			at := deps{now: func() time.Time { return testNow }}
			code := runWith(context.Background(), []string{"trend", "--report-dir", dir, "--tz", "Europe/Warsaw"}, envconfig.MapLookuper(nil), &stdout, &stderr, at)
			if code != exitIncomplete {
				t.Errorf("exit %d, want 3\n%s", code, stderr.String())
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout holds a trend of what could not be read:\n%s", stdout.String())
			}
			if !strings.Contains(stderr.String(), "s3://reports/nightly") || strings.Contains(stderr.String(), "endpoint=") {
				t.Errorf("stderr does not name the bucket, or shows its query:\n%s", stderr.String())
			}
		})
	}
}

// A report.json cut short in its tables (a copy that stopped, a full
// disk) is listed by serve, but the trend, which needs its days, exits 3
// naming the run, and prints no trend that would leave its nights out.
func TestTrendOfAReportCutShort(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	at := deps{now: func() time.Time { return testNow }}
	if code := runWith(context.Background(), []string{"demo", "--report-dir", dir}, envconfig.MapLookuper(nil), &stdout, &stderr, at); code != exitOK {
		t.Fatalf("demo: exit %d\n%s", code, stderr.String())
	}
	runs, err := filepath.Glob(filepath.Join(dir, "*", "report.json"))
	if err != nil || len(runs) == 0 {
		t.Fatalf("the demo's reports: %v %v", runs, err)
	}
	b, err := os.ReadFile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(`"links"`))
	if i < 0 {
		t.Fatalf("no links table in %s", runs[0])
	}
	if err := os.WriteFile(runs[0], b[:i+20], 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	code := runWith(context.Background(), []string{"trend", "--report-dir", dir, "--tz", "Europe/Warsaw", "--from", "2026-10-21", "--to", "2026-10-27"},
		envconfig.MapLookuper(nil), &stdout, &stderr, at)
	run := filepath.Base(filepath.Dir(runs[0]))
	if code != exitIncomplete || stdout.Len() > 0 || !strings.Contains(stderr.String(), run) {
		t.Errorf("exit %d (want 3), stdout %q (want none), stderr naming %s:\n%s", code, stdout.String(), run, stderr.String())
	}
}
