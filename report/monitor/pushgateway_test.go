package monitor

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// pushed is one request a fake Pushgateway received.
type pushed struct {
	method string
	path   string
	user   string
	pass   string
	// metrics holds each gauge's value by name; labels holds any label a
	// metric carried, which must be none.
	metrics map[string]float64
	labels  []string
}

// fakePushgateway records the pushes it receives and answers status.
type fakePushgateway struct {
	*httptest.Server
	mu     sync.Mutex
	pushes []pushed
	status int
}

func newFakePushgateway(t *testing.T, status int) *fakePushgateway {
	t.Helper()
	f := &fakePushgateway{status: status}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := pushed{method: r.Method, path: r.URL.EscapedPath(), metrics: map[string]float64{}}
		p.user, p.pass, _ = r.BasicAuth()
		dec := expfmt.NewDecoder(r.Body, expfmt.ResponseFormat(r.Header))
		for {
			var mf dto.MetricFamily
			if err := dec.Decode(&mf); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Errorf("fake Pushgateway: decode body: %v", err)
				}
				break
			}
			if mf.GetType() != dto.MetricType_GAUGE {
				t.Errorf("metric %s has type %s, want GAUGE", mf.GetName(), mf.GetType())
			}
			for _, m := range mf.GetMetric() {
				p.metrics[mf.GetName()] = m.GetGauge().GetValue()
				for _, l := range m.GetLabel() {
					p.labels = append(p.labels, mf.GetName()+"{"+l.GetName()+"}")
				}
			}
		}
		f.mu.Lock()
		f.pushes = append(f.pushes, p)
		f.mu.Unlock()
		w.WriteHeader(f.status)
		if f.status >= 300 {
			io.WriteString(w, "push rejected")
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakePushgateway) received() []pushed {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]pushed(nil), f.pushes...)
}

func TestPush(t *testing.T) {
	finished := time.Date(2026, 11, 29, 3, 15, 42, 250_000_000, time.UTC)
	const ts = 1795922142.25 // finished, in Unix seconds

	tests := []struct {
		name      string
		workspace string
		m         Metrics
		wantPath  string
		want      map[string]float64
	}{{
		name:      "completed_run_records_a_success",
		workspace: "48213",
		m: Metrics{Finished: finished, Duration: 12500 * time.Millisecond,
			DaysChecked: 3, DaysDiscrepant: 1, DaysUnverifiable: 0, ExitCode: 0},
		wantPath: "/metrics/job/clickrecon/workspace/48213",
		want: map[string]float64{
			"clickrecon_last_run_timestamp_seconds":     ts,
			"clickrecon_last_success_timestamp_seconds": ts,
			"clickrecon_duration_seconds":               12.5,
			"clickrecon_days_checked":                   3,
			"clickrecon_days_discrepant":                1,
			"clickrecon_days_unverifiable":              0,
			"clickrecon_exit_code":                      0,
		},
	}, {
		name:      "gaps_at_fail_on_still_completed",
		workspace: "48213",
		m: Metrics{Finished: finished, Duration: time.Second,
			DaysChecked: 3, DaysDiscrepant: 2, DaysUnverifiable: 1, ExitCode: 1},
		wantPath: "/metrics/job/clickrecon/workspace/48213",
		want: map[string]float64{
			"clickrecon_last_run_timestamp_seconds":     ts,
			"clickrecon_last_success_timestamp_seconds": ts,
			"clickrecon_duration_seconds":               1,
			"clickrecon_days_checked":                   3,
			"clickrecon_days_discrepant":                2,
			"clickrecon_days_unverifiable":              1,
			"clickrecon_exit_code":                      1,
		},
	}, {
		name:      "incomplete_run_pushes_no_success",
		workspace: "48213",
		m: Metrics{Finished: finished, Duration: 30 * time.Minute,
			DaysChecked: 3, DaysUnverifiable: 3, ExitCode: 3},
		wantPath: "/metrics/job/clickrecon/workspace/48213",
		want: map[string]float64{
			"clickrecon_last_run_timestamp_seconds": ts,
			"clickrecon_duration_seconds":           1800,
			"clickrecon_days_checked":               3,
			"clickrecon_days_discrepant":            0,
			"clickrecon_days_unverifiable":          3,
			"clickrecon_exit_code":                  3,
		},
	}, {
		name:      "configuration_error_pushes_no_success",
		workspace: "48213",
		m:         Metrics{Finished: finished, ExitCode: 2},
		wantPath:  "/metrics/job/clickrecon/workspace/48213",
		want: map[string]float64{
			"clickrecon_last_run_timestamp_seconds": ts,
			"clickrecon_duration_seconds":           0,
			"clickrecon_days_checked":               0,
			"clickrecon_days_discrepant":            0,
			"clickrecon_days_unverifiable":          0,
			"clickrecon_exit_code":                  2,
		},
	}, {
		name:      "workspace_with_a_slash_is_base64_encoded",
		workspace: "team/eu",
		m:         Metrics{Finished: finished, ExitCode: 3},
		wantPath:  "/metrics/job/clickrecon/workspace@base64/dGVhbS9ldQ",
		want: map[string]float64{
			"clickrecon_last_run_timestamp_seconds": ts,
			"clickrecon_duration_seconds":           0,
			"clickrecon_days_checked":               0,
			"clickrecon_days_discrepant":            0,
			"clickrecon_days_unverifiable":          0,
			"clickrecon_exit_code":                  3,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := newFakePushgateway(t, http.StatusOK)
			p, err := NewPushgateway(gw.URL)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Push(context.Background(), tt.workspace, tt.m); err != nil {
				t.Fatalf("Push: %v", err)
			}
			got := gw.received()
			if len(got) != 1 {
				t.Fatalf("the Pushgateway got %d requests, want 1", len(got))
			}
			if got[0].method != http.MethodPost {
				t.Errorf("method %s, want POST (push-add: keep the metrics this push does not carry)", got[0].method)
			}
			if got[0].path != tt.wantPath {
				t.Errorf("path %s, want %s", got[0].path, tt.wantPath)
			}
			if diff := cmp.Diff(tt.want, got[0].metrics); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
			if len(got[0].labels) > 0 {
				t.Errorf("metrics carry labels %v: the grouping key (job, workspace) must be the only labels", got[0].labels)
			}
		})
	}
}

func TestPushBasicAuthAndPathPrefix(t *testing.T) {
	gw := newFakePushgateway(t, http.StatusAccepted)
	raw := strings.Replace(gw.URL, "http://", "http://pusher:p%40ss-s3cret@", 1) + "/pgw/"
	p, err := NewPushgateway(raw)
	if err != nil {
		t.Fatal(err)
	}
	if s := p.String(); strings.Contains(s, "s3cret") || strings.Contains(s, "pusher") {
		t.Errorf("String() = %q shows the user info", s)
	}
	if err := p.Push(context.Background(), "48213", Metrics{Finished: time.Unix(1, 0), ExitCode: 0}); err != nil {
		t.Fatalf("Push: %v", err)
	}
	got := gw.received()[0]
	if got.user != "pusher" || got.pass != "p@ss-s3cret" {
		t.Errorf("basic auth %q:%q, want pusher:p@ss-s3cret", got.user, got.pass)
	}
	if want := "/pgw/metrics/job/clickrecon/workspace/48213"; got.path != want {
		t.Errorf("path %s, want %s", got.path, want)
	}
}

func TestPushErrors(t *testing.T) {
	gw := newFakePushgateway(t, http.StatusInternalServerError)
	p, err := NewPushgateway(strings.Replace(gw.URL, "http://", "http://pusher:s3cret@", 1))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Push(context.Background(), "48213", Metrics{Finished: time.Unix(1, 0)})
	if err == nil {
		t.Fatal("Push to a Pushgateway answering 500: got nil error")
	}
	t.Logf("error: %v", err)
	if !strings.Contains(err.Error(), "500") {
		t.Errorf("error %q does not give the status", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error shows the password: %v", err)
	}

	// A Pushgateway that never answers costs the run no more than the
	// call's timeout.
	hang := newHangingServer(t)
	p, err = NewPushgateway(hang.URL)
	if err != nil {
		t.Fatal(err)
	}
	p.timeout = 100 * time.Millisecond
	start := time.Now()
	err = p.Push(context.Background(), "48213", Metrics{Finished: time.Unix(1, 0)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Push to a hanging Pushgateway: %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Push took %s despite a 100ms timeout", d)
	}
}

func TestNewPushgatewayRejects(t *testing.T) {
	for _, raw := range []string{
		"",
		"pushgateway:9091",
		"ftp://pushgateway:9091",
		"http://",
		"http://user:s3cret@pushgateway:9091/?x=1",
		"http://pushgateway:9091/#frag",
		"http://user:s3cret@[::1/",
	} {
		_, err := NewPushgateway(raw)
		if err == nil {
			t.Errorf("NewPushgateway(%q): got nil error", raw)
			continue
		}
		if !strings.Contains(err.Error(), "PUSHGATEWAY_URL") {
			t.Errorf("NewPushgateway(%q): error %q does not name the variable", raw, err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("NewPushgateway(%q): error shows the password: %v", raw, err)
		}
	}
}

// newHangingServer returns a server that reads each request and never
// answers it, until the test ends.
func newHangingServer(t *testing.T) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() {
		close(done)
		srv.Close()
	})
	return srv
}

// A fleet's workspaces push to groups named by their entries, even two
// that read the same Elido workspace; without a fleet the group is the
// workspace's alone, as before.
func TestPushForFleetEntry(t *testing.T) {
	f := newFakePushgateway(t, http.StatusOK)
	p, err := NewPushgateway(f.URL)
	if err != nil {
		t.Fatal(err)
	}
	m := Metrics{Finished: time.Now(), ExitCode: 0}
	for _, q := range []*Pushgateway{p.ForFleetEntry("east"), p.ForFleetEntry("west"), p} {
		if err := q.Push(context.Background(), "48213", m); err != nil {
			t.Fatal(err)
		}
	}
	var groups []string
	for _, got := range f.pushes {
		// The Pushgateway takes a grouping key's labels in any order.
		parts := strings.Split(strings.TrimPrefix(got.path, "/metrics/"), "/")
		var pairs []string
		for i := 0; i+1 < len(parts); i += 2 {
			pairs = append(pairs, parts[i]+"="+parts[i+1])
		}
		slices.Sort(pairs)
		groups = append(groups, strings.Join(pairs, " "))
		if len(got.labels) > 0 {
			t.Errorf("metrics carry labels %v", got.labels)
		}
	}
	want := []string{
		"fleet_workspace=east job=clickrecon workspace=48213",
		"fleet_workspace=west job=clickrecon workspace=48213",
		"job=clickrecon workspace=48213",
	}
	if diff := cmp.Diff(want, groups); diff != "" {
		t.Errorf("grouping keys (-want +got):\n%s", diff)
	}
}
