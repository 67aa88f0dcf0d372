// Package s3test starts an in-process S3 server (gofakes3, in memory) for
// the tests of what reads and writes reports in a bucket.
package s3test

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
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
	return Start(t, prefix, Options{AfterGet: afterGet})
}

// Options are how Start's server differs from New's.
type Options struct {
	// AfterGet, when not nil, is called with the object's key after each
	// GET the server answers.
	AfterGet func(key string)
	// TLS serves HTTPS, with a certificate the AWS SDK trusts through
	// AWS_CA_BUNDLE: the SDK then sends a PUT's body as it does to AWS.
	TLS bool
	// Wrap, when not nil, stands between the client and the server: it
	// may answer a request itself or change the server's answer.
	Wrap func(http.Handler) http.Handler
}

// Start is New with o.
func Start(t *testing.T, prefix string, o Options) (dir string, puts func() []string) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("reports"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var written []string
	var fake http.Handler = gofakes3.New(backend).Server()
	if o.Wrap != nil {
		fake = o.Wrap(fake)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && !strings.Contains(r.URL.Path, "/.clickrecon-check-") { // not the probe's marker
			mu.Lock()
			written = append(written, r.URL.Path)
			mu.Unlock()
		}
		fake.ServeHTTP(w, r)
		if r.Method == http.MethodGet && o.AfterGet != nil {
			o.AfterGet(strings.TrimPrefix(r.URL.Path, "/reports/"))
		}
	})
	Isolate(t)
	var srv *httptest.Server
	if o.TLS {
		srv = httptest.NewTLSServer(h)
		ca := filepath.Join(t.TempDir(), "ca.pem")
		cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		if err := os.WriteFile(ca, cert, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AWS_CA_BUNDLE", ca)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
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

// OtherETag wraps w so that its answer carries the ETag of another
// version than the server's: the object as if rewritten between a HEAD
// and the GET it answers.
func OtherETag(w http.ResponseWriter) http.ResponseWriter { return otherETag{w} }

type otherETag struct{ http.ResponseWriter }

func (w otherETag) WriteHeader(code int) {
	w.Header().Set("ETag", `"another-version"`)
	w.ResponseWriter.WriteHeader(code)
}

func (w otherETag) Write(b []byte) (int, error) {
	if w.Header().Get("ETag") != `"another-version"` {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}
