package history

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/reconcile"
)

// TestSQLiteHistoryWrittenByModernc checks that a history written with
// modernc.org/sqlite v1.62.0 (clickrecon's embedded SQLite before
// ncruces/go-sqlite3) opens and reads alike, its instants as that build
// stored them: testdata/history-modernc.db holds a recorded run, a posted
// alert, a pending post and a resolved notice, written through this
// package's own API. It is copied first: migrate and the writes below
// change the file.
func TestSQLiteHistoryWrittenByModernc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "history-modernc.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	// What an upgrade does: migrate (applies what is newer than the file),
	// then open.
	h := migrated(t, "sqlite:"+path)

	day := func(s string) reconcile.Date {
		d, err := reconcile.ParseDate(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	counts, err := h.LastCounts(ctx, "48213", "Europe/Warsaw", day("2026-11-24"), day("2026-11-26"))
	if err != nil {
		t.Fatal(err)
	}
	const runKey = "20261124_20261126_0123456789ab"
	wantCounts := map[reconcile.Date]reconcile.Recorded{
		day("2026-11-24"): {Clicks: 1000, RunKey: runKey, At: "2026-11-27T03:00:12Z"},
		day("2026-11-25"): {Clicks: 1200, RunKey: runKey, At: "2026-11-27T03:00:12Z"},
	}
	if diff := cmp.Diff(wantCounts, counts); diff != "" {
		t.Errorf("LastCounts (-want +got):\n%s", diff)
	}

	alerts, err := h.Alerts(ctx, scope, "2026-11-20", "2026-11-30")
	if err != nil {
		t.Fatal(err)
	}
	wantAlerts := map[string]Alert{"2026-11-25": {Date: "2026-11-25", Status: "missing", Severity: "warn",
		API: 1200, Local: 1195, Delta: -5, Transport: TransportBot, Channel: "C0123", TS: "1795910412.000100",
		From: "2026-11-24", To: "2026-11-26", RunKey: runKey}}
	if diff := cmp.Diff(wantAlerts, alerts); diff != "" {
		t.Errorf("Alerts (-want +got):\n%s", diff)
	}

	pending, err := h.Pending(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 {
		t.Fatalf("Pending = %+v, want the one pending post", pending)
	}
	p := pending[0]
	if p.ID != 2 || p.RunKey != "20261125_20261127_0123456789ab" || len(p.Alerts) != 1 || p.Alerts[0].Delta != 7 {
		t.Errorf("pending post = %+v, want id 2 of run 20261125_20261127_0123456789ab, one surplus of 7", p)
	}
	// The instants SQLite wrote (strftime) read back as RFC 3339 UTC.
	for _, at := range []string{p.Created, p.Updated} {
		if _, err := time.Parse(time.RFC3339, at); err != nil || at != "2026-12-05T14:38:14Z" {
			t.Errorf("pending post's instant = %q, want 2026-12-05T14:38:14Z as written", at)
		}
	}

	n, ok, err := h.LastNotice(ctx, "48213", "st_a")
	if err != nil || !ok {
		t.Fatalf("LastNotice = %v, %v", ok, err)
	}
	wantNotice := Notice{WorkspaceID: "48213", StoreID: "st_a", Fingerprint: "elido:http_401",
		Reason: "Elido refused the API key (HTTP 401)", RunKey: runKey,
		FirstPosted: time.Date(2026, 11, 23, 3, 0, 5, 0, time.UTC),
		LastPosted:  time.Date(2026, 11, 24, 3, 0, 7, 0, time.UTC),
		Resolved:    time.Date(2026, 11, 27, 3, 0, 12, 0, time.UTC)}
	if diff := cmp.Diff(wantNotice, n); diff != "" {
		t.Errorf("LastNotice (-want +got):\n%s", diff)
	}

	// The file takes new writes: the pending post is settled and its
	// day becomes alerted, its unique index still in force.
	if err := h.MarkPosted(ctx, p.ID, "C0123", "1795996812.000200"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Intend(ctx, sampleIntent("rk_new")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Intend(ctx, sampleIntent("rk_again")); !errors.Is(err, ErrPending) {
		t.Errorf("second pending Intend = %v, want ErrPending", err)
	}
	alerts, err = h.Alerts(ctx, scope, "2026-11-20", "2026-11-30")
	if err != nil {
		t.Fatal(err)
	}
	if a := alerts["2026-11-26"]; a.TS != "1795996812.000200" || a.Delta != 7 {
		t.Errorf("alert of 2026-11-26 after MarkPosted = %+v, want the surplus of 7 in message 1795996812.000200", a)
	}
}
