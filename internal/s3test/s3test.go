// Package s3test starts an in-process S3 server (gofakes3, in memory) for
// the tests of what reads and writes reports in a bucket.
package s3test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// New starts an S3 server with the bucket "reports" and returns the
// RECON_REPORT_DIR naming prefix in it, and a function that returns the
// paths written to it so far. afterGet, when not nil, is called with the
// object's key after each GET the server answers. The AWS settings come
// from the test alone, never from the machine.
func New(t *testing.T, prefix string, afterGet func(key string)) (dir string, puts func() []string) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("reports"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var written []string
	fake := gofakes3.New(backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && !strings.Contains(r.URL.Path, "/.clickrecon-check-") { // not the probe's marker
			mu.Lock()
			written = append(written, r.URL.Path)
			mu.Unlock()
		}
		fake.ServeHTTP(w, r)
		if r.Method == http.MethodGet && afterGet != nil {
			afterGet(strings.TrimPrefix(r.URL.Path, "/reports/"))
		}
	}))
	t.Cleanup(srv.Close)
	Isolate(t)
	return Dir(srv.URL, prefix), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(written)
	}
}

// Isolate makes the AWS SDK take its credentials and configuration from
// the test alone, never from the machine's ~/.aws or an instance metadata
// service.
func Isolate(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
}

// Dir is the RECON_REPORT_DIR naming prefix in the bucket "reports" of
// the S3 server at endpoint.
func Dir(endpoint, prefix string) string {
	q := url.Values{"endpoint": {endpoint}, "use_path_style": {"true"}, "region": {"eu-central-1"}}
	return "s3://reports/" + prefix + "?" + q.Encode()
}
