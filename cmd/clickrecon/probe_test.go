package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// A store that broke overnight (its table renamed) stops every run at the
// probe, exit 2, before any request to Elido and with no report: and
// Slack hears of it as of any failure a run meets, once over two nights,
// and once more when a run reads the store again.
func TestProbeFailureIsHeardOnceThenRecovered(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "postgres", api, api)
	ws := fmt.Sprintf("%s%04d", testWorkspace, fixtures.Add(1))
	srv := elidotest.NewServer(ws, testKey, api)
	t.Cleanup(srv.Close)
	f.elido = srv
	f.env["ELIDO_WORKSPACE_ID"], f.env["ELIDO_API_BASE"] = ws, srv.URL()
	hook := withSlack(t, f, "postgres")
	// The store's owner, on a connection of its own.
	owner, err := sqlx.Open("postgres", f.env["STORE_DSN"])
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if _, err := owner.Exec(`ALTER TABLE clicks RENAME TO clicks_archived`); err != nil {
		t.Fatal(err)
	}

	f.runs(2, exitUsage, window...)
	if got := srv.Requests(); len(got) != 0 {
		t.Errorf("Elido was asked %v by a run its probe stopped", got)
	}
	if paths, _ := filepath.Glob(filepath.Join(f.reportDir, "*")); len(paths) != 0 {
		t.Errorf("a report folder was made: %v", paths)
	}
	got := hook.posted()
	if len(got) != 1 {
		t.Fatalf("two nights at a broken store posted %d messages, want one notice: %q", len(got), got)
	}
	for _, s := range []string{"could not check", "STORE_PRESET=events", "clicks", "2026-10-24 to 2026-10-26"} {
		if !strings.Contains(got[0], s) {
			t.Errorf("the notice lacks %q: %s", s, got[0])
		}
	}
	noSecrets(t, got)

	if _, err := owner.Exec(`ALTER TABLE clicks_archived RENAME TO clicks`); err != nil {
		t.Fatal(err)
	}
	f.runs(1, exitOK, window...)
	f.runs(1, exitOK, window...)
	got = hook.posted()
	if len(got) != 2 || !strings.Contains(got[1], "again") {
		t.Fatalf("the mended store's runs posted %q, want one recovery message after the notice", got)
	}
}

// A SQLite history deleted overnight stops the run at the probe, exit 2,
// and Slack hears of it each night, naming HISTORY_DSN and saying to run
// clickrecon migrate; without Slack, the run still exits 2 saying so.
func TestDeletedSQLiteHistoryIsHeard(t *testing.T) {
	api := dstWindowClicks()
	f := uniqueFixture(t, api, api)
	hook := withSlack(t, f, "sqlite")
	path := strings.TrimPrefix(f.env["HISTORY_DSN"], "sqlite:")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	got := noticeEachNight(t, f, hook)
	for _, s := range []string{"HISTORY_DSN", path, "does not exist", "clickrecon migrate"} {
		if !strings.Contains(got[0], s) {
			t.Errorf("the notice lacks %q: %s", s, got[0])
		}
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("the run created the history file %s: only clickrecon migrate does", path)
	}

	delete(f.env, "SLACK_WEBHOOK_URL")
	r := f.run(window...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "HISTORY_DSN: sqlite file") || !strings.Contains(r.stderr, "does not exist (run clickrecon migrate to create it)") {
		t.Errorf("without Slack: exit %d, want 2 naming HISTORY_DSN and saying to migrate:\n%s", r.code, r.stderr)
	}
	if n := len(hook.posted()); n != 2 {
		t.Errorf("a run without Slack posted: %d messages", n)
	}
}

// noticeEachNight runs the window on two nights that the probe stops
// (exit 2, no request to Elido), and returns what Slack got: a notice
// each night, as nothing can remember one while the history is the cause.
func noticeEachNight(t *testing.T, f *fixture, hook *fakeWebhook) []string {
	t.Helper()
	f.runs(2, exitUsage, window...)
	if got := f.elido.Requests(); len(got) != 0 {
		t.Errorf("Elido was asked %v by a run its probe stopped", got)
	}
	got := hook.posted()
	if len(got) != 2 {
		t.Fatalf("two nights posted %d messages, want a notice each night: %q", len(got), got)
	}
	return got
}

// A history that was never migrated stops the run at the probe: with
// nothing to remember a notice in, the night is told in Slack as a run
// with its history down tells it, every night.
func TestProbeFailureOnTheHistoryIsHeard(t *testing.T) {
	api := dstWindowClicks()
	f := uniqueFixture(t, api, api)
	hook := withSlack(t, f, "")
	path := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.env["HISTORY_DSN"] = "sqlite:" + path
	got := noticeEachNight(t, f, hook)
	if !strings.Contains(got[0], "clickrecon migrate") {
		t.Errorf("the notice does not say to migrate: %s", got[0])
	}
}
