package viewer

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/s3test"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/storage"
)

// Every file of a run served from a bucket is sent whole, byte for byte
// as written (a folder's are too), with a Content-Length that is its
// length: report.html with the bar put in, the others as they are.
func TestServeSendsEveryFileWholeFromABucket(t *testing.T) {
	local := t.TempDir()
	rep := serveReport(serveNew, time.Date(2026, 10, 29, 1, 0, 0, 0, time.UTC), report.StatusDiscrepancies, -42)
	if _, err := storage.Write(local, rep); err != nil {
		t.Fatal(err)
	}
	dests := servedDests()
	// Over HTTPS the AWS SDK, left to itself, sends a PUT's body
	// aws-chunked with a trailing checksum, which an S3 server may store
	// as it came, framing and all.
	dests["s3_over_https"] = func(t *testing.T) *storage.Dest {
		dir, _ := s3test.Start(t, "nightly", s3test.Options{TLS: true})
		return writeRuns(t, dir)
	}
	// A server whose HEAD declares fewer bytes than its GET sends: what is
	// served is what the GET declares.
	dests["s3_whose_head_and_get_disagree"] = func(t *testing.T) *storage.Dest {
		dir, _ := s3test.Start(t, "nightly", s3test.Options{Wrap: shortHead})
		return writeRuns(t, dir)
	}
	for name, dest := range dests {
		t.Run(name, func(t *testing.T) {
			srv, logs := startServe(t, dest(t))
			for _, file := range report.Files {
				want, err := os.ReadFile(filepath.Join(local, serveNew, file))
				if err != nil {
					t.Fatal(err)
				}
				resp, body := get(t, srv, http.MethodGet, "/"+serveNew+"/"+file)
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s: %s", file, resp.Status)
					continue
				}
				if file == "report.html" {
					if len(body) <= len(want) {
						t.Errorf("%s: %d bytes, want the page's %d and the bar", file, len(body), len(want))
					}
				} else if body != string(want) {
					t.Errorf("%s: %d bytes sent, %d written", file, len(body), len(want))
				}
				if resp.ContentLength != int64(len(body)) {
					t.Errorf("%s: Content-Length %d, %d bytes sent", file, resp.ContentLength, len(body))
				}
			}
			if t.Failed() {
				t.Logf("server log:\n%s", logs.String())
			}
		})
	}
}

// shortHead answers a HEAD with a Content-Length 7 bytes short of the
// object's.
func shortHead(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		if n, err := strconv.ParseInt(rec.Header().Get("Content-Length"), 10, 64); err == nil && n > 7 {
			w.Header().Set("Content-Length", strconv.FormatInt(n-7, 10))
		}
		w.WriteHeader(rec.Code)
	})
}
