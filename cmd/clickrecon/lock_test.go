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
