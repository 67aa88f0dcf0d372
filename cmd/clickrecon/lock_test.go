package main

import (
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/job/runlock"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/sources/store"
)

// The embedded setup (SQLite store, SQLite history or none) has a lock
// too: a second run of the workspace does nothing and exits 3.
func TestEmbeddedRunRefusedWhileAnotherHoldsTheLock(t *testing.T) {
	for _, historyBackend := range []string{"sqlite", ""} {
		t.Run("history_"+historyBackend, func(t *testing.T) {
			api := dstWindowClicks()
			f := newFixture(t, "sqlite", api, api)
			withSlack(t, f, historyBackend)
			var hist dsn.Target // zero: no history
			if raw := f.env["HISTORY_DSN"]; raw != "" {
				hist = dbtest.Parsed(t, history.ParseDSN, raw)
			}
			l, err := runlock.Take(t.Context(), runlock.On(hist, dbtest.Parsed(t, store.ParseDSN, f.env["STORE_DSN"])), testWorkspace)
			if err != nil {
				t.Fatal(err)
			}
			r := f.run("--date", "2026-10-25")
			if r.code != exitIncomplete || !strings.Contains(r.stdout, "another run of workspace "+testWorkspace+" is in progress") {
				t.Errorf("exit %d, stdout %q; want 3 and a message about the other run", r.code, r.stdout)
			}
			if log := f.elido.RequestLog(); len(log) != 0 {
				t.Errorf("requests were made while the lock was held: %v", log)
			}
			if err := l.Release(); err != nil {
				t.Fatal(err)
			}
			if r := f.run("--date", "2026-10-25"); r.code != exitOK {
				t.Errorf("after the lock was released: exit %d\n%s", r.code, r.stderr)
			}
		})
	}
}

// The lock is taken before the probe: a run that finds the store broken
// while another run holds the lock leaves the telling to that run, and
// once the lock is free it tells it itself, under the lock.
func TestProbeFailureWaitsForTheLock(t *testing.T) {
	api := dstWindowClicks()
	f := uniqueFixture(t, api, api)
	hook := withSlack(t, f, "sqlite")
	archiveClicks(t, f.env["STORE_DSN"])
	l, err := runlock.Take(t.Context(), runlock.On(dbtest.Parsed(t, history.ParseDSN, f.env["HISTORY_DSN"]), dbtest.Parsed(t, store.ParseDSN, f.env["STORE_DSN"])), f.env["ELIDO_WORKSPACE_ID"])
	if err != nil {
		t.Fatal(err)
	}
	if r := f.run(window...); r.code != exitIncomplete || !strings.Contains(r.stdout, "is in progress") {
		t.Errorf("while another run holds the lock: exit %d, stdout %q; want 3", r.code, r.stdout)
	}
	if got := hook.posted(); len(got) != 0 {
		t.Errorf("a run refused by the lock posted %q", got)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	f.runs(1, exitUsage, window...)
	if got := hook.posted(); len(got) != 1 || !strings.Contains(got[0], "STORE_PRESET=events") {
		t.Errorf("once the lock is free, posted %q; want one notice naming STORE_PRESET", got)
	}
	if got := f.elido.Requests(); len(got) != 0 {
		t.Errorf("Elido was asked %v", got)
	}
}
