package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// pushed is one request a fake Pushgateway received.
type pushed struct{ method, path, body string }

// fakePushgateway records every request; with dropAnswer it takes the
// push whole and hangs up without answering, as a gateway that dies after
// the write, or a proxy that loses the answer, does.
func fakePushgateway(t *testing.T, dropAnswer bool) (*httptest.Server, func() []pushed) {
	t.Helper()
	var mu sync.Mutex
	var got []pushed
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, pushed{r.Method, r.URL.Path, string(b)})
		mu.Unlock()
		if dropAnswer {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []pushed {
		mu.Lock()
		defer mu.Unlock()
		return append([]pushed(nil), got...)
	}
}

// A push the Pushgateway took but never answered is a warning: the run's
// exit code stands, and the metrics reached the gateway once (a push
// replaces the workspace's metrics, so one repeated later is harmless).
func TestMonitoringPushAnswerLost(t *testing.T) {
	api := dstWindowClicks()
	f := uniqueFixture(t, api, api)
	srv, got := fakePushgateway(t, true)
	f.env["PUSHGATEWAY_URL"] = srv.URL
	r := f.run("--date", "2026-10-25")
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0 with the push's answer lost\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "pushgateway push failed") {
		t.Errorf("the lost answer is not logged:\n%s", r.stderr)
	}
	ps := got()
	if len(ps) != 1 || !strings.Contains(ps[0].body, "clickrecon_exit_code") {
		t.Errorf("the gateway received %d pushes, want the one push whole: %+v", len(ps), ps)
	}
}

// Two workspaces' runs push at once to a gateway that holds other jobs'
// groups: each run adds to its own group only (POST, its own workspace's
// path), so neither overwrites the other nor deletes anything it did not
// push.
func TestMonitoringConcurrentPushersKeepToTheirGroups(t *testing.T) {
	api := dstWindowClicks()
	srv, got := fakePushgateway(t, false)
	a, b := uniqueFixture(t, api, api), uniqueFixture(t, api, api)
	var wg sync.WaitGroup
	for _, f := range []*fixture{a, b} {
		f.env["PUSHGATEWAY_URL"] = srv.URL
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := f.run("--date", "2026-10-25"); r.code != exitOK {
				t.Errorf("exit %d\n%s", r.code, r.stderr)
			}
		}()
	}
	wg.Wait()
	want := map[string]bool{
		"/metrics/job/clickrecon/workspace/" + a.env["ELIDO_WORKSPACE_ID"]: true,
		"/metrics/job/clickrecon/workspace/" + b.env["ELIDO_WORKSPACE_ID"]: true,
	}
	ps := got()
	if len(ps) != 2 {
		t.Fatalf("the gateway received %+v, want one push per run", ps)
	}
	for _, p := range ps {
		if p.method != http.MethodPost || !want[p.path] {
			t.Errorf("%s %s: want a POST to one run's own group, %v", p.method, p.path, want)
		}
		delete(want, p.path)
	}
}
