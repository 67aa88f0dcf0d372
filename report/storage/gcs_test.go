//go:build gcs

package storage

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// A build with the tag gcs has the gs:// driver: a read reaches the
// store (here an emulator's address) instead of failing as ErrNoDriver.
func TestGCSDriverBuilt(t *testing.T) {
	var mu sync.Mutex
	var got []string
	gcs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		mu.Unlock()
		http.Error(w, `{"error":{"code":404,"message":"No such object"}}`, http.StatusNotFound)
	}))
	t.Cleanup(gcs.Close)
	u, _ := url.Parse(gcs.URL)
	t.Setenv("STORAGE_EMULATOR_HOST", u.Host)
	_, err := ReadReport(context.Background(), "gs://reports/r/key")
	if err == nil || errors.Is(err, ErrNoDriver) {
		t.Errorf("ReadReport: error %v, want the store's not found", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || got[0] != "GET /storage/v1/b/reports/o/r/key/report.json" {
		t.Errorf("the store got %q, want a read of r/key/report.json", got)
	}
}
