package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// onArrival cancels ctx when the first request to endpoint reaches the
// fake Elido, or after a bound that fails the test, so no wait is
// unbounded. It stops watching when ctx or the test ends first.
func onArrival(ctx context.Context, t *testing.T, srv *elidotest.Server, endpoint string, cancel func()) {
	t.Helper()
	arrived := srv.Arrived(endpoint)
	testDone := t.Context()
	go func() {
		defer cancel()
		select {
		case <-arrived:
		case <-ctx.Done():
		case <-testDone.Done():
		case <-time.After(30 * time.Second):
			t.Errorf("no %s request after 30s", endpoint)
		}
	}()
}

// SIGTERM (a cancelled context, as main's signal.NotifyContext makes it)
// or the run's deadline stops a run stuck on a slow API (each answer takes
// a minute; a run that waited for them would hit the test timeout): exit
// 3, the report written and marked incomplete, no day called a gap.
func TestRunStopsPromptly(t *testing.T) {
	for _, tt := range []struct {
		name    string
		timeout string
		sigterm bool // on the first request, else the deadline stops it
		want    string
	}{
		{name: "sigterm", timeout: "30m", sigterm: true, want: "stopped (SIGTERM or interrupt)"},
		{name: "deadline", timeout: "300ms", want: "RECON_TIMEOUT=300ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
			f.elido.SetFaults(elidotest.Fault{Kind: elidotest.Slow, Delay: time.Minute})
			f.env["RECON_TIMEOUT"] = tt.timeout
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.sigterm {
				onArrival(ctx, t, f.elido, "timeseries", cancel)
			}
			var stdout, stderr bytes.Buffer
			code := runWith(ctx, []string{"run", "--from", "2026-10-24", "--to", "2026-10-26"}, envconfig.MapLookuper(f.env), &stdout, &stderr, f.deps())
			if code != exitIncomplete {
				t.Fatalf("exit %d, want 3\n%s", code, stderr.String())
			}
			got := f.readReport()
			if got.Status != "incomplete" || !strings.Contains(got.Interrupted, tt.want) {
				t.Errorf("status %q, interrupted %q; want incomplete, %q", got.Status, got.Interrupted, tt.want)
			}
			for _, d := range got.Days {
				if d.Status == "missing" || d.Status == "surplus" {
					t.Errorf("%s reported as %s after the run was stopped", d.Date, d.Status)
				}
			}
		})
	}
}

// A drill-down slower than its limit stops there, and the run still
// completes: the report has the gaps and Slack gets its alert. The limit
// is reached when the slow request arrives, not after a guessed time.
func TestSlowDrilldownStillAlerts(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	hook := withSlack(t, f, "")
	f.elido.SetFaults(elidotest.Fault{Kind: elidotest.Slow, Delay: time.Minute, Endpoint: "breakdown/country"})
	d := f.deps()
	d.drillLimit = func(ctx context.Context) (context.Context, context.CancelFunc) {
		dctx, cancel := context.WithCancel(ctx)
		onArrival(dctx, t, f.elido, "breakdown/country", cancel)
		return dctx, cancel
	}
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), []string{"run", "--from", "2026-10-24", "--to", "2026-10-26"}, envconfig.MapLookuper(f.env), &stdout, &stderr, d)
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0\n%s", r.code, r.stderr)
	}
	got := f.readReport()
	if got.Status != "discrepancies" || got.Interrupted != "" {
		t.Errorf("status %q, interrupted %q; want discrepancies", got.Status, got.Interrupted)
	}
	if !strings.Contains(findingText(got.Findings, "drilldown_incomplete"), "time limit") {
		t.Errorf("no finding says the drill-down stopped: %+v", got.Findings)
	}
	if len(hook.posted()) != 1 {
		t.Errorf("posted %d messages, want the alert", len(hook.posted()))
	}
}

// SIGTERM after the gaps were found (during the drill-down) posts
// nothing: no half-finished alert, the report marked incomplete, exit 3.
func TestSigtermAfterGapsPostsNothing(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	hook := withSlack(t, f, "sqlite")
	f.elido.SetFaults(elidotest.Fault{Kind: elidotest.Slow, Delay: time.Minute, Endpoint: "breakdown/link"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	onArrival(ctx, t, f.elido, "breakdown/link", cancel) // the gaps are found by then
	var stdout, stderr bytes.Buffer
	code := runWith(ctx, []string{"run", "--from", "2026-10-24", "--to", "2026-10-26"}, envconfig.MapLookuper(f.env), &stdout, &stderr, f.deps())
	if code != exitIncomplete {
		t.Fatalf("exit %d, want 3\n%s", code, stderr.String())
	}
	got := f.readReport()
	if got.Status != "incomplete" || got.Coverage.Missing != 1 {
		t.Errorf("status %q with %d missing days; want incomplete, the gap still reported", got.Status, got.Coverage.Missing)
	}
	if n := len(hook.posted()); n != 0 {
		t.Errorf("posted %d messages after SIGTERM", n)
	}
	// Nothing was recorded either: the next run alerts.
	if r := f.run("--from", "2026-10-24", "--to", "2026-10-26", "--drilldown", "off"); r.code != exitOK || len(hook.posted()) != 1 {
		t.Errorf("the next run: exit %d, %d posts; want 0 and the alert", r.code, len(hook.posted()))
	}
}
