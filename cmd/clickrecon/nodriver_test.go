//go:build !gcs && !azblob

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
)

// A default build given a gs:// or azblob:// RECON_REPORT_DIR exits 2
// before any request, saying that this build lacks the driver and which
// build tag adds it; run and merge alike, the URL's query never quoted.
func TestReportDirWithoutDriver(t *testing.T) {
	for _, tt := range []struct{ name, dir, want string }{
		{"gs", "gs://acme-reports/clickrecon?access_id=s3cr3t", "go build -tags gcs ./cmd/clickrecon"},
		{"azblob", "azblob://reports/clickrecon?sig=s3cr3t", "go build -tags azblob ./cmd/clickrecon"},
	} {
		t.Run(tt.name+"/run", func(t *testing.T) {
			f := newFixture(t, "sqlite", nil, nil)
			f.env["RECON_REPORT_DIR"] = tt.dir
			r := f.run()
			checkNoDriver(t, r, tt.want)
			if log := f.elido.RequestLog(); len(log) != 0 {
				t.Errorf("requests were made: %v", log)
			}
		})
		t.Run(tt.name+"/merge", func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := envconfig.MapLookuper(map[string]string{"RECON_REPORT_DIR": tt.dir})
			code := runWith(context.Background(), []string{"merge", "a/key", "b/key"}, env, &stdout, &stderr, deps{now: func() time.Time { return testNow }})
			checkNoDriver(t, result{code: code, stdout: stdout.String(), stderr: stderr.String()}, tt.want)
		})
	}
}

func checkNoDriver(t *testing.T, r result, want string) {
	t.Helper()
	if r.code != exitUsage {
		t.Errorf("exit %d, want 2\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "this build of clickrecon lacks the driver") || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "RECON_REPORT_DIR") {
		t.Errorf("stderr does not say the build lacks the driver, nor %q:\n%s", want, r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, "s3cr3t") {
		t.Errorf("the URL's query appears in the output:\n%s%s", r.stdout, r.stderr)
	}
}
