package storage

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/s3test"
)

// A GET answered with another ETag than the HEAD just before it is the
// object rewritten between the two: the file is not opened (ErrNoReport,
// as for any file of a run being written), rather than sent with the
// length of one version and the bytes of another.
func TestOpenRunFileWhoseObjectChangedBetweenHeadAndGet(t *testing.T) {
	r := sample(t)
	dir, _ := s3test.Start(t, "r", s3test.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/days.csv") {
				w = s3test.OtherETag(w)
			}
			h.ServeHTTP(w, req)
		})
	}})
	if _, err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.OpenRunFile(ctx, r.RunKey, "days.csv"); !errors.Is(err, ErrNoReport) || !strings.Contains(err.Error(), "changed as it was opened") {
		t.Errorf("OpenRunFile of an object rewritten between HEAD and GET: error %v, want ErrNoReport, changed as it was opened", err)
	}
	if _, _, err := readRunFile(d, r.RunKey, "links.csv"); err != nil {
		t.Errorf("an unchanged object: %v", err)
	}
}

// The AWS SDK's own log lines ("Response has no supported checksum…")
// never reach stderr, where the run's JSON log goes: writing a run to a
// bucket over HTTPS and reading it back writes nothing there.
func TestS3WritesNothingOnStderr(t *testing.T) {
	dir, _ := s3test.Start(t, "r", s3test.Options{TLS: true})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = stderr }()
	rep := sample(t)
	_, werr := Write(dir, rep)
	var rerr error
	if werr == nil {
		_, rerr = ReadReport(context.Background(), strings.Replace(dir, "?", "/"+rep.RunKey+"?", 1))
	}
	os.Stderr = stderr
	w.Close()
	got, _ := io.ReadAll(r)
	if werr != nil || rerr != nil {
		t.Fatalf("write: %v; read: %v", werr, rerr)
	}
	if len(got) > 0 {
		t.Errorf("stderr got %q", got)
	}
}

// WithSleep: the waits between an S3 request's retries go through the
// given sleep, one a retry, and the request is retried as before (a
// server answering 503 twice, then storing the report).
func TestS3RetriesWaitThroughWithSleep(t *testing.T) {
	var mu sync.Mutex
	refused := map[string]int{}
	dir, _ := s3test.Start(t, "r", s3test.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			mu.Lock()
			n := refused[req.URL.Path]
			if req.Method == http.MethodPut && n < 2 {
				refused[req.URL.Path] = n + 1
				mu.Unlock()
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`))
				return
			}
			mu.Unlock()
			h.ServeHTTP(w, req)
		})
	}})
	var waits []time.Duration
	sleep := func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return nil
	}
	ctx := context.Background()
	d, err := Open(ctx, dir, WithSleep(sleep))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r := sample(t)
	if _, err := d.WriteReport(ctx, r); err != nil {
		t.Fatalf("a report whose every PUT is refused twice, then taken: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	puts := len(refused)
	if puts == 0 {
		t.Fatal("no PUT was refused: the test's server did not stand in front")
	}
	if len(waits) != 2*puts {
		t.Errorf("%d waits through WithSleep for %d objects refused twice each, want %d", len(waits), puts, 2*puts)
	}
	for _, w := range waits {
		if w <= 0 || w > 20*time.Second {
			t.Errorf("a wait of %v: want the SDK's backoff, above 0 and at most 20s", w)
		}
	}
}
