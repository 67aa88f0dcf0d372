package main

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// BenchmarkRunBackfill measures a whole run over a 120-day backfill of a
// workspace with 3,000 links (about 240,000 clicks in an SQLite store), of
// which two days differ and are drilled into: the reads, the comparison,
// the drill-down and the four report files. Run it with -benchmem; the
// fake Elido's own work is included, so compare runs of this benchmark
// with each other, not with production figures.
func BenchmarkRunBackfill(b *testing.B) {
	const days, links, perDay = 120, 3000, 2000
	start := utc("2026-06-01T10:00:00Z")
	var api, local []elidotest.Click
	for d := 0; d < days; d++ {
		for i := 0; i < perDay; i++ {
			c := elidotest.Click{
				TS:          start.Add(time.Duration(d)*24*time.Hour + time.Duration(i)*7*time.Second),
				LinkID:      fmt.Sprintf("lnk_%05d", (i*7+d*13)%links),
				CountryCode: "PL",
			}
			api = append(api, c)
			if (d == 40 || d == 90) && i%50 == 0 {
				continue // lost
			}
			local = append(local, c)
		}
	}
	srv := elidotest.NewServer(testWorkspace, testKey, api)
	defer srv.Close()
	dsn := buildStore(b, "sqlite", local)
	env := envconfig.MapLookuper(map[string]string{
		"ELIDO_API_KEY": testKey, "ELIDO_WORKSPACE_ID": testWorkspace, "ELIDO_API_BASE": srv.URL(),
		"ELIDO_RATE_LIMIT": "100000", "STORE_DSN": dsn, "RECON_TZ": "Europe/Warsaw",
		"RECON_REPORT_DIR": b.TempDir(), "LOG_LEVEL": "error", "RECON_MAX_DAYS": "400",
	})
	noSleep := func(ctx context.Context, d time.Duration) error { return ctx.Err() }
	b.ReportAllocs()
	peak := sampleHeap()
	defer func() { b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB") }()
	b.ResetTimer()
	for b.Loop() {
		var stdout, stderr bytes.Buffer
		code := runWith(context.Background(), []string{"run", "--from", "2026-06-01", "--to", "2026-09-28"}, env, &stdout, &stderr,
			deps{now: func() time.Time { return testNow }, elido: []elido.Option{elido.WithClock(time.Now, noSleep)}})
		if code != exitOK {
			b.Fatalf("exit %d\n%s", code, stderr.String())
		}
	}
}

// sampleHeap samples the live heap every millisecond until the returned
// function is called, which returns the largest size seen above the heap
// at the start: the run's peak working set, the fixture's data aside.
func sampleHeap() func() uint64 {
	read := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if v := read(); v > base && v-base > peak.Load() {
					peak.Store(v - base)
				}
			}
		}
	}()
	return func() uint64 {
		close(done)
		return peak.Load()
	}
}
