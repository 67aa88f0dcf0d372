package job

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/report"
)

// blindReport is a run that read no day on both sides: its totals are
// not known.
func blindReport() report.Report {
	return report.Report{RunKey: "20261129_20261129_0123456789ab", Window: report.Window{From: "2026-11-29", To: "2026-11-29", TZ: "UTC"},
		Status: report.StatusIncomplete, Totals: report.Totals{Unknown: true},
		Days:     []report.Day{{Date: "2026-11-29", Hours: 24, Status: "unverifiable", Severity: "ok", Reason: "GET timeseries: 503"}},
		Coverage: report.Coverage{Days: 1, Unverifiable: 1}}
}

// The "run finished" line leaves unknown totals out rather than logging
// 0s a dashboard would sum; known totals, 0 included, are logged.
func TestFinishedLeavesUnknownTotalsOut(t *testing.T) {
	t.Parallel()
	known := blindReport()
	known.Totals = report.Totals{}
	for _, tt := range []struct {
		name string
		rep  report.Report
		want bool
	}{
		{"unknown_totals", blindReport(), false},
		{"known_zero_totals", known, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			Outcome{Report: tt.rep}.Finished(slog.New(slog.NewJSONHandler(&b, nil)), 3, time.Second)
			var line map[string]any
			if err := json.Unmarshal(b.Bytes(), &line); err != nil {
				t.Fatalf("%v: %s", err, b.String())
			}
			for _, k := range []string{"api", "local", "delta"} {
				if _, ok := line[k]; ok != tt.want {
					t.Errorf("%s logged: %v, want %v: %s", k, ok, tt.want, b.String())
				}
			}
		})
	}
}

// The healthcheck's summary says the delta is not known, not "delta +0".
func TestMonitorSummaryUnknownDelta(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
	}))
	defer srv.Close()
	m, err := NewMonitors("", srv.URL+"/ping/abc")
	if err != nil {
		t.Fatal(err)
	}
	m.finish(context.Background(), slog.New(slog.DiscardHandler), "48213", 3, blindReport(), time.Now(), time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || !strings.Contains(bodies[0], "delta not known") || strings.Contains(bodies[0], "delta +0") {
		t.Errorf("healthcheck summary %q, want one saying the delta is not known", bodies)
	}
}
