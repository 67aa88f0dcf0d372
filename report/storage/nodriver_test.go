//go:build !gcs && !azblob

package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// The default build has no gs:// nor azblob:// driver: such a
// destination is an ErrNoDriver that names the build tag to add, from
// Open, ReadReport and CheckDriver alike, and never quotes the URL's
// query. s3:// and folders are not refused.
func TestOptionalDriversLeftOut(t *testing.T) {
	for _, tt := range []struct{ scheme, url, tag string }{
		{"gs", "gs://reports/clickrecon?access_id=s3cr3t", "go build -tags gcs ./cmd/clickrecon"},
		{"azblob", "azblob://reports/clickrecon?sig=s3cr3t", "go build -tags azblob ./cmd/clickrecon"},
	} {
		t.Run(tt.scheme, func(t *testing.T) {
			_, openErr := Open(context.Background(), tt.url)
			_, readErr := ReadReport(context.Background(), tt.url+"/key")
			for name, err := range map[string]error{"Open": openErr, "ReadReport": readErr, "CheckDriver": CheckDriver(tt.url)} {
				if !errors.Is(err, ErrNoDriver) {
					t.Fatalf("%s: error %v, want ErrNoDriver", name, err)
				}
				msg := err.Error()
				if !strings.Contains(msg, tt.scheme+"://") || !strings.Contains(msg, tt.tag) || strings.Contains(msg, "s3cr3t") {
					t.Errorf("%s: error %q: want the scheme and %q, without the query", name, msg, tt.tag)
				}
			}
		})
	}
	for _, ok := range []string{"s3://reports/clickrecon?region=eu-central-1", "file:///tmp/reports", "reports", `C:\reports`} {
		if err := CheckDriver(ok); err != nil {
			t.Errorf("CheckDriver(%q) = %v, want nil", ok, err)
		}
	}
}
