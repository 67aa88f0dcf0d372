package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/sources/elidotest"
)

var fixtures atomic.Int64

// uniqueFixture is newFixture with a workspace of its own, so that no
// other test's history rows or run lock can touch it.
func uniqueFixture(t *testing.T, api, local []elidotest.Click) *fixture {
	t.Helper()
	f := newFixture(t, "sqlite", api, local)
	ws := fmt.Sprintf("%s%04d", testWorkspace, fixtures.Add(1))
	srv := elidotest.NewServer(ws, testKey, api)
	t.Cleanup(srv.Close)
	f.elido = srv
	f.env["ELIDO_WORKSPACE_ID"], f.env["ELIDO_API_BASE"] = ws, srv.URL()
	return f
}

// runs runs the window n times and checks each exit code.
func (f *fixture) runs(n, want int, args ...string) {
	f.t.Helper()
	for i := range n {
		if r := f.run(args...); r.code != want {
			f.t.Fatalf("run %d: exit %d, want %d\n%s", i+1, r.code, want, r.stderr)
		}
	}
}

func noSecrets(t *testing.T, msgs []string) {
	t.Helper()
	for _, m := range msgs {
		if strings.Contains(m, testKey) || strings.Contains(m, "SECRETPART") || strings.Contains(m, "s3cr3t-pw") {
			t.Errorf("a secret appears in Slack: %s", m)
		}
	}
}

var window = []string{"--from", "2026-10-24", "--to", "2026-10-26"}

// A revoked API key (exit 2, every day unverifiable) is told once, with
// the reason and what to do, over three nights; the first run that checks
// again says so, once.
func TestRevokedKeyIsHeardOnce(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			api := dstWindowClicks()
			f := uniqueFixture(t, api, api)
			hook := withSlack(t, f, backend)
			f.elido.SetFaults(elidotest.Fault{Kind: elidotest.Unauthorized})
			f.runs(3, exitUsage, window...)
			got := hook.posted()
			if len(got) != 1 {
				t.Fatalf("three runs with a revoked key posted %d messages, want one notice: %q", len(got), got)
			}
			for _, s := range []string{"could not check", "401", "check ELIDO_API_KEY", "fix ELIDO_API_KEY", "2026-10-24 to 2026-10-26"} {
				if !strings.Contains(got[0], s) {
					t.Errorf("the notice lacks %q: %s", s, got[0])
				}
			}

			f.elido.SetFaults()
			f.runs(1, exitOK, window...)
			got = hook.posted()
			if len(got) != 2 || !strings.Contains(got[1], "again") {
				t.Fatalf("the run after the fix posted %q, want one message saying checking works again", got[1:])
			}
			f.runs(1, exitOK, window...)
			if got := hook.posted(); len(got) != 2 {
				t.Errorf("a second good run posted again: %q", got[2:])
			}
			noSecrets(t, hook.posted())
		})
	}
}

// storeProxy stands between the job and a Postgres store: while down it
// drops every connection, as a store that is down does, and the DSN the
// job holds stays the same.
type storeProxy struct {
	ln   net.Listener
	down atomic.Bool
}

func newStoreProxy(t *testing.T, target string) *storeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &storeProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed
			}
			if p.down.Load() {
				c.Close()
				continue
			}
			go func() {
				defer c.Close()
				up, err := net.DialTimeout("tcp", target, 5*time.Second)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
	return p
}

// A store that is down (exit 3) is told once over three nights, with the
// reason, and the recovery once.
func TestStoreDownIsHeardOnce(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			api := dstWindowClicks()
			f := uniqueFixture(t, api, api)
			hook := withSlack(t, f, backend)
			u, err := url.Parse(buildStore(t, "postgres", api))
			if err != nil {
				t.Fatal(err)
			}
			proxy := newStoreProxy(t, u.Host)
			u.Host = proxy.ln.Addr().String()
			q := u.Query()
			q.Set("connect_timeout", "2")
			u.RawQuery = q.Encode()
			f.env["STORE_DSN"] = u.String()

			proxy.down.Store(true)
			f.runs(3, exitIncomplete, window...)
			got := hook.posted()
			if len(got) != 1 {
				t.Fatalf("three runs with the store down posted %d messages, want one notice: %q", len(got), got)
			}
			for _, s := range []string{"the store's daily counts", "STORE_DSN"} {
				if !strings.Contains(got[0], s) {
					t.Errorf("the notice lacks %q: %s", s, got[0])
				}
			}

			proxy.down.Store(false)
			f.runs(1, exitOK, window...)
			got = hook.posted()
			if len(got) != 2 || !strings.Contains(got[1], "again") {
				t.Fatalf("the run after the store came back posted %q, want one message saying checking works again", got[1:])
			}
			f.runs(1, exitOK, window...)
			if got := hook.posted(); len(got) != 2 {
				t.Errorf("a second good run posted again: %q", got[2:])
			}
			noSecrets(t, hook.posted())
		})
	}
}

// A history that is down cannot remember a notice: every run posts one,
// saying the history is down, and no gap alert (it could repeat).
func TestHistoryDownIsHeardEveryRun(t *testing.T) {
	api := dstWindowClicks()
	f := uniqueFixture(t, api, lossAndDuplicate(api))
	hook := withSlack(t, f, "")
	f.env["HISTORY_DSN"] = "postgres://recon:s3cr3t-pw@127.0.0.1:1/history?sslmode=disable&connect_timeout=1"
	f.runs(3, exitIncomplete, window...)
	got := hook.posted()
	if len(got) != 3 {
		t.Fatalf("three runs with the history down posted %d messages, want one notice each: %q", len(got), got)
	}
	for i, m := range got {
		if !strings.Contains(m, "run history") || !strings.Contains(m, "HISTORY_DSN") || strings.Contains(m, "Click gaps") {
			t.Errorf("message %d is not the notice that the history is down: %s", i+1, m)
		}
	}
	noSecrets(t, got)
}

// Under SLACK_NOTIFY=always a run that could not check posts the reason,
// every run, never an alert of zeros.
func TestAlwaysShowsTheReason(t *testing.T) {
	api := dstWindowClicks()
	f := uniqueFixture(t, api, api)
	withSlack(t, f, "sqlite") // the history
	hook, bodies := rawWebhook(t)
	f.env["SLACK_WEBHOOK_URL"] = hook
	f.env["SLACK_NOTIFY"] = "always"
	f.elido.SetFaults(elidotest.Fault{Kind: elidotest.Unauthorized})
	f.runs(2, exitUsage, window...)
	got := bodies()
	if len(got) != 2 {
		t.Fatalf("two runs under SLACK_NOTIFY=always posted %d messages, want two", len(got))
	}
	for i, m := range got {
		if !strings.Contains(m, "401") || !strings.Contains(m, "ELIDO_API_KEY") || strings.Contains(m, "*Elido* 0") {
			t.Errorf("message %d does not show the reason, or shows zeros: %s", i+1, m)
		}
	}
}

// Settled days unverifiable on their own account (older than Elido
// keeps) are told once, though the run exits 0.
func TestUnverifiableDaysAreHeardOnce(t *testing.T) {
	api := clicksAt("lnk_a", "2026-10-30T12:00:00Z", "2026-11-02T12:00:00Z")
	f := uniqueFixture(t, nil, api)
	hook := withSlack(t, f, "sqlite")
	f.env["ELIDO_RETENTION_DAYS"] = "29"
	f.runs(2, exitOK, "--from", "2026-10-30", "--to", "2026-11-01")
	got := hook.posted()
	if len(got) != 1 || !strings.Contains(got[0], "ELIDO_RETENTION_DAYS=29") {
		t.Errorf("posted %q, want one notice naming the retention", got)
	}
}

// A run stopped by its deadline says so in a notice (the CronJob may
// retry it, and a retry may be stopped too); one stopped by SIGTERM posts
// nothing: the pod is going away and no post may be left half-made.
func TestStoppedRunNotice(t *testing.T) {
	for _, tt := range []struct {
		name      string
		sigterm   bool
		wantPosts int
	}{
		{name: "deadline", wantPosts: 1},
		{name: "sigterm", sigterm: true, wantPosts: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := dstWindowClicks()
			f := uniqueFixture(t, api, api)
			hook := withSlack(t, f, "sqlite")
			f.elido.SetFaults(elidotest.Fault{Kind: elidotest.Slow, Delay: time.Minute})
			f.env["RECON_TIMEOUT"] = "300ms"
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.sigterm {
				f.env["RECON_TIMEOUT"] = "30m"
				onArrival(ctx, t, f.elido, "timeseries", cancel)
			}
			var stdout, stderr bytes.Buffer
			if code := runWith(ctx, append([]string{"run"}, window...), envconfig.MapLookuper(f.env), &stdout, &stderr, f.deps()); code != exitIncomplete {
				t.Fatalf("exit %d, want 3\n%s", code, stderr.String())
			}
			got := hook.posted()
			if len(got) != tt.wantPosts {
				t.Fatalf("posted %q, want %d messages", got, tt.wantPosts)
			}
			if tt.wantPosts == 1 && !strings.Contains(got[0], "RECON_TIMEOUT=300ms") {
				t.Errorf("the notice does not name the deadline: %s", got[0])
			}
		})
	}
}
