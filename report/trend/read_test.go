package trend_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/clickrecon/clickrecon/internal/s3test"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/report/trend"
)

// A concurrent writer: a report.json rewritten between the HEAD and the
// GET that read it whole (the GET after the listing's, answered once with
// another ETag) is read again, never passed over: the trend reads every
// run.
func TestReadRereadsAReportRewrittenAsItIsOpened(t *testing.T) {
	var mu sync.Mutex
	gets, struck := map[string]int{}, false
	dir, _ := s3test.Start(t, "nightly", s3test.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/report.json") {
				mu.Lock()
				gets[r.URL.Path]++
				if gets[r.URL.Path] == 2 && !struck {
					struck, w = true, s3test.OtherETag(w)
				}
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		})
	}})
	start, _ := reconcile.ParseDate("2026-03-01")
	reps := randomNights(rand.New(rand.NewPCG(3, 37)), start, 12)
	for _, rep := range reps {
		if _, err := storage.Write(dir, rep); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	d, err := storage.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tr, _ := trend.New(start.AddDays(-30), start.AddDays(30))
	n, err := trend.Read(ctx, d, tr, "48213")
	if err != nil {
		t.Fatal(err)
	}
	if n != len(reps) || !struck {
		t.Errorf("%d reports read, want all %d (a rewrite struck: %v)", n, len(reps), struck)
	}
}
