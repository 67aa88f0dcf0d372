package storage

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/safehttp"
	"github.com/clickrecon/clickrecon/report"
)

// objectsUnder returns the objects under prefix/ in the fake S3's bucket,
// by name below the prefix, with their content.
func objectsUnder(t *testing.T, d *Dest, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	got := map[string]string{}
	it := d.bucket.List(prefix+"/", "")
	for {
		obj, err := it.Next(ctx)
		if err != nil {
			break
		}
		r, err := d.bucket.NewReader(ctx, obj.Key)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		got[strings.TrimPrefix(obj.Key, prefix+"/")] = string(b)
	}
	return got
}

func files(v string, names ...string) []report.File {
	var out []report.File
	for _, n := range names {
		out = append(out, report.File{Name: n, Data: []byte(`{"run_key":"` + v + `"}`)})
	}
	return out
}

// A rewrite of a run's folder in object storage that dies at any file
// leaves either no report.json (a reader sees no report, never part of
// one) and, when report.html is there, only the new write's files beside
// it; the next write gives the new report whole, and removes the files of
// the old one it does not write. Objects clickrecon did not write stay.
func TestS3RewriteThatDiesMidway(t *testing.T) {
	newNames := []string{"report.json", "days.csv", "links.csv", "report.html"}
	for _, failing := range newNames {
		t.Run(failing, func(t *testing.T) {
			s := newS3(t)
			d := openDest(t, s.dest("r"))
			ctx := context.Background()
			if err := d.Write(ctx, "key", files("v1", "report.json", "days.csv", "links.csv", "hours.csv", "report.html")); err != nil {
				t.Fatal(err)
			}
			// Someone else's objects beside and below the report.
			if err := d.bucket.WriteAll(ctx, "key/notes.txt", []byte("mine"), "", nil); err != nil {
				t.Fatal(err)
			}
			if err := d.bucket.WriteAll(ctx, "key/sub/x", []byte("mine too"), "", nil); err != nil {
				t.Fatal(err)
			}
			s.failSuffix = "/" + failing
			err := d.Write(ctx, "key", files("v2", newNames...))
			if !errors.Is(err, ErrNotStored) {
				t.Fatalf("the write that failed at %s: error %v, want ErrNotStored", failing, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "RECON_REPORT_DIR s3://reports/r") || strings.Contains(msg, "endpoint=") {
				t.Errorf("error %q: want RECON_REPORT_DIR named without its query", msg)
			}
			got := objectsUnder(t, d, "key")
			if _, ok := got["report.json"]; ok {
				t.Errorf("report.json is there after a write that failed at %s: %q", failing, got)
			}
			if _, ok := got["report.html"]; ok {
				for _, n := range []string{"days.csv", "links.csv", "report.html"} {
					if got[n] != `{"run_key":"v2"}` {
						t.Errorf("report.html is there, but %s is %q: a link would open a mixed report", n, got[n])
					}
				}
			}
			if _, err := ReadReport(ctx, s.dest("r/key")); err == nil {
				t.Error("a reader read a report from the folder of a write that failed")
			}

			s.failSuffix = ""
			if err := d.Write(ctx, "key", files("v2", newNames...)); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"notes.txt": "mine", "sub/x": "mine too"}
			for _, n := range newNames {
				want[n] = `{"run_key":"v2"}`
			}
			if diff := cmp.Diff(want, objectsUnder(t, d, "key")); diff != "" {
				t.Errorf("after the rerun (-want +got):\n%s", diff)
			}
			if r, err := ReadReport(ctx, s.dest("r/key")); err != nil || r.RunKey != "v2" {
				t.Errorf("ReadReport after the rerun: %q, %v", r.RunKey, err)
			}
		})
	}
}

// Two writes of one report folder at once: the write whose files were
// overwritten fails, and a reader refuses the folder's report.json while
// the folder mixes the two; a rerun gives a whole report.
func TestS3ConcurrentWritesOfOneFolder(t *testing.T) {
	s := newS3(t)
	a, b := openDest(t, s.dest("r")), openDest(t, s.dest("r"))
	ctx := context.Background()
	names := []string{"report.json", "days.csv", "report.html"}
	var started atomic.Bool
	var bErr error
	s.beforePut = func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/report.json") && started.CompareAndSwap(false, true) {
			// Just before A's report.json lands, B writes the whole
			// folder.
			bErr = b.Write(ctx, "key", files("B", names...))
		}
		return false
	}
	errA := a.Write(ctx, "key", files("A", names...))
	s.beforePut = nil
	if bErr != nil {
		t.Fatalf("B: %v", bErr)
	}
	if !errors.Is(errA, ErrConcurrentWrite) || !errors.Is(errA, ErrNotStored) {
		t.Fatalf("A, whose files B overwrote: error %v, want ErrConcurrentWrite", errA)
	}
	if r, err := ReadReport(ctx, s.dest("r/key")); !errors.Is(err, ErrConcurrentWrite) {
		t.Errorf("ReadReport of the mixed folder: %q, %v; want ErrConcurrentWrite", r.RunKey, err)
	}
	if err := a.Write(ctx, "key", files("A", names...)); err != nil {
		t.Fatal(err)
	}
	if r, err := ReadReport(ctx, s.dest("r/key")); err != nil || r.RunKey != "A" {
		t.Errorf("after the rerun: %q, %v", r.RunKey, err)
	}
}

// A PUT of report.json that the store carries out but whose answer never
// arrives: the write either retries it or fails as not stored, and the
// folder holds this write's whole report or none; a rerun writes it whole.
func TestS3AnswerLost(t *testing.T) {
	s := newS3(t)
	d := openDest(t, s.dest("r"))
	ctx := context.Background()
	names := []string{"report.json", "days.csv", "report.html"}
	var lost atomic.Bool
	s.beforePut = func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, "/report.json") || !lost.CompareAndSwap(false, true) {
			return false
		}
		rec := httptest.NewRecorder()
		s.fake.ServeHTTP(rec, r) // stored...
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // ...and the answer lost
		}
		return true
	}
	err := d.Write(ctx, "key", files("v1", names...))
	if err != nil && !errors.Is(err, ErrNotStored) {
		t.Fatalf("error %v, want nil or ErrNotStored", err)
	}
	if r, err := ReadReport(ctx, s.dest("r/key")); err == nil && r.RunKey != "v1" {
		t.Errorf("read %q, want this write's report or none", r.RunKey)
	}
	if err := d.Write(ctx, "key", files("v2", names...)); err != nil {
		t.Fatal(err)
	}
	if r, err := ReadReport(ctx, s.dest("r/key")); err != nil || r.RunKey != "v2" {
		t.Errorf("after the rerun: %q, %v", r.RunKey, err)
	}
}

// redirectingS3 is an S3 endpoint that answers every request with a 307
// to the same path on another origin, which records what reaches it.
func redirectingS3(t *testing.T) (dest func(prefix string) string, reached func() []http.Header) {
	t.Helper()
	newS3(t) // the AWS settings of the test
	var mu sync.Mutex
	var seen []http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		w.Write([]byte(`{"schema_version":1,"run_key":"from_elsewhere"}`))
	}))
	t.Cleanup(other.Close)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(first.Close)
	return func(prefix string) string {
			q := url.Values{"endpoint": {first.URL}, "use_path_style": {"true"}, "region": {"eu-central-1"}}
			return "s3://reports/" + prefix + "?" + q.Encode()
		}, func() []http.Header {
			mu.Lock()
			defer mu.Unlock()
			return seen
		}
}

// An S3 endpoint redirecting to another origin (another port of the same
// host) never gets the request's signature forwarded: the redirect is not
// followed, the write fails as not stored, and the read fails instead of
// taking the other origin's answer for a report.
func TestS3RedirectToAnotherOrigin(t *testing.T) {
	dest, reached := redirectingS3(t)
	ctx := context.Background()
	_, err := ReadReport(ctx, dest("r/key"))
	if !errors.Is(err, safehttp.ErrRedirect) {
		t.Errorf("ReadReport: error %v, want ErrRedirect", err)
	}
	_, err = Write(dest("r"), sample(t))
	if !errors.Is(err, safehttp.ErrRedirect) || !errors.Is(err, ErrNotStored) {
		t.Errorf("Write: error %v, want ErrRedirect and ErrNotStored", err)
	}
	// What serve reads goes through the same client.
	d, err := Open(ctx, dest("r"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Runs(ctx); !errors.Is(err, safehttp.ErrRedirect) {
		t.Errorf("Runs: error %v, want ErrRedirect", err)
	}
	if _, err := d.OpenRunFile(ctx, "20261024_20261026_156b86900e9c", "report.html"); err == nil {
		t.Errorf("OpenRunFile read a file through a redirect to another origin")
	}
	if got := reached(); len(got) != 0 {
		t.Errorf("the other origin got %d requests (the first with Authorization %q)", len(got), got[0].Get("Authorization"))
	}
}

// A report store that refuses the write gives a *NotStoredError naming
// RECON_REPORT_DIR, without its query, and what to check.
func TestWriteRefused(t *testing.T) {
	s := newS3(t)
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, check string
		failSuffix       string
	}{
		{"local_folder_cannot_be_created", filepath.Join(notDir, "reports"), "can be created", ""},
		{"no_such_bucket", strings.Replace(s.dest("r"), "s3://reports/", "s3://nobucket/", 1), "that the bucket exists", ""},
		{"access_denied", s.dest("r"), "credentials may", "/days.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.failSuffix = tt.failSuffix
			_, err := Write(tt.dir, sample(t))
			var ns *NotStoredError
			if !errors.Is(err, ErrNotStored) || !errors.As(err, &ns) {
				t.Fatalf("error %v, want a *NotStoredError", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "RECON_REPORT_DIR") || !strings.Contains(msg, tt.check) || strings.Contains(msg, "endpoint=") {
				t.Errorf("error %q: want RECON_REPORT_DIR (without its query) and %q", msg, tt.check)
			}
		})
	}
}

func TestRedactQueries(t *testing.T) {
	got := redactQueries(`Put "https://acct.blob.core.windows.net/c/k?sv=2020&sig=s3cr3t": EOF`)
	if strings.Contains(got, "s3cr3t") || !strings.Contains(got, "https://acct.blob.core.windows.net/c/k?…") {
		t.Errorf("redactQueries = %q", got)
	}
}
