package storage

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

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
