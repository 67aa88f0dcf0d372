package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/job/runlock"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/elidotest"
	"github.com/clickrecon/clickrecon/sources/store"
)

// A second run of a workspace whose lock is held does nothing: no
// request, no report, exit 3 with a message saying why.
func TestRunRefusedWhileAnotherHoldsTheLock(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "postgres", api, api)
	held, err := runlock.Take(t.Context(), dbtest.Parsed(t, store.ParseDSN, f.env["STORE_DSN"]), testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	health := newRecorder(t)
	f.env["HEALTHCHECK_URL"] = health.URL + "/ping/uuid"
	r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
	if pings := health.requests(); len(pings) != 0 {
		t.Errorf("the refused run pinged the healthcheck %q: the run holding the lock reports, not this one", pings)
	}
	if r.code != exitIncomplete || !strings.Contains(r.stdout, "another run of workspace "+testWorkspace+" is in progress") {
		t.Errorf("exit %d, stdout %q; want 3 and a message about the other run", r.code, r.stdout)
	}
	if log := f.elido.RequestLog(); len(log) != 0 {
		t.Errorf("requests were made: %v", log)
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	if r := f.run("--from", "2026-10-24", "--to", "2026-10-26"); r.code != exitOK {
		t.Errorf("after the lock was released: exit %d\n%s", r.code, r.stderr)
	}
}

// The lock lives on the history database when there is one.
func TestLockOnHistoryDatabase(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, api)
	withSlack(t, f, "postgres")
	held, err := runlock.Take(t.Context(), dbtest.Parsed(t, history.ParseDSN, f.env["HISTORY_DSN"]), testWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	r := f.run("--date", "2026-10-25")
	if r.code != exitIncomplete || !strings.Contains(r.stdout, "another run of workspace "+testWorkspace+" is in progress") {
		t.Errorf("exit %d, stdout %q; want 3 and a message about the other run", r.code, r.stdout)
	}
	if log := f.elido.RequestLog(); len(log) != 0 {
		t.Errorf("requests were made while the history's lock was held: %v", log)
	}
}

// recorder is an httptest server that records each request's method,
// path and body.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []string
}

func newRecorder(t *testing.T) *recorder {
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, r.Method+" "+r.URL.Path+" "+string(b))
		rec.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

func TestMonitoring(t *testing.T) {
	tests := []struct {
		name        string
		faults      []elidotest.Fault
		wantCode    int
		wantSuccess bool
		wantBody    string
	}{
		{name: "completed", wantCode: exitOK, wantSuccess: true, wantBody: "exit 0: gaps 2026-10-24..2026-10-26 Europe/Warsaw, 3 days, 2 gaps, 0 unverifiable"},
		{name: "api_down", faults: []elidotest.Fault{{Kind: elidotest.ServerError, Status: 500}}, wantCode: exitIncomplete, wantBody: "exit 3: incomplete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
			f.elido.SetFaults(tt.faults...)
			push, health := newRecorder(t), newRecorder(t)
			f.env["PUSHGATEWAY_URL"] = push.URL
			f.env["HEALTHCHECK_URL"] = health.URL + "/ping/0b4d1f0e-secret-uuid"
			r := f.run("--from", "2026-10-24", "--to", "2026-10-26")
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d\n%s", r.code, tt.wantCode, r.stderr)
			}
			if strings.Contains(r.stderr+r.stdout, "0b4d1f0e-secret-uuid") {
				t.Error("the healthcheck's secret uuid appears in the output")
			}
			pings := health.requests()
			if len(pings) != 2 || !strings.HasSuffix(strings.Fields(pings[0])[1], "/ping/0b4d1f0e-secret-uuid/start") {
				t.Fatalf("healthcheck pings %q, want /start then the exit code", pings)
			}
			wantEnd := "POST /ping/0b4d1f0e-secret-uuid/" + map[int]string{0: "0", 3: "3"}[tt.wantCode] + " "
			if !strings.HasPrefix(pings[1], wantEnd) || !strings.Contains(pings[1], tt.wantBody) {
				t.Errorf("end ping %q, want %q with %q", pings[1], wantEnd, tt.wantBody)
			}
			pushes := push.requests()
			if len(pushes) != 1 {
				t.Fatalf("pushes %q, want one", pushes)
			}
			fields := strings.SplitN(pushes[0], " ", 3)
			if diff := cmp.Diff([]string{"POST", "/metrics/job/clickrecon/workspace/" + testWorkspace}, fields[:2]); diff != "" {
				t.Errorf("push (-want +got):\n%s", diff)
			}
			if got := strings.Contains(pushes[0], "clickrecon_last_success_timestamp_seconds"); got != tt.wantSuccess {
				t.Errorf("last_success pushed: %v, want %v", got, tt.wantSuccess)
			}
			for _, m := range []string{"clickrecon_last_run_timestamp_seconds", "clickrecon_exit_code", "clickrecon_days_checked", "clickrecon_days_discrepant", "clickrecon_days_unverifiable", "clickrecon_duration_seconds"} {
				if !strings.Contains(pushes[0], m) {
					t.Errorf("push lacks %s", m)
				}
			}
		})
	}
}

// A monitoring endpoint that is down never changes the run's exit code.
func TestMonitoringDownDoesNotFailTheRun(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, api)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	f.env["PUSHGATEWAY_URL"] = down.URL
	f.env["HEALTHCHECK_URL"] = down.URL + "/ping/uuid"
	if r := f.run("--date", "2026-10-25"); r.code != exitOK {
		t.Errorf("exit %d, want 0 with monitoring down\n%s", r.code, r.stderr)
	}
	// The healthcheck retried each ping (start and end) twice, a second
	// apart, on the test's clock: the test itself never waited.
	f.waits.mu.Lock()
	defer f.waits.mu.Unlock()
	seconds := 0
	for _, w := range f.waits.waits {
		if w == time.Second {
			seconds++
		}
	}
	if seconds != 4 {
		t.Errorf("waits %v, want four of a second from the healthcheck", f.waits.waits)
	}
}
