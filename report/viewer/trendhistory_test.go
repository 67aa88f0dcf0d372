package viewer

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/history/historytest"
)

// With a run history, the trend page of / reads it, as clickrecon trend
// does: a run whose report was pruned still counts, the time to alert is
// shown, and the page says where it read from.
func TestServeTrendPageFromTheHistory(t *testing.T) {
	ctx := context.Background()
	h := historytest.Open(t, "sqlite:"+filepath.Join(t.TempDir(), "history.db"))
	// A run recorded, its report pruned since (the folder holds another).
	rep := serveReport("20261025_20261027_000000000042", time.Date(2026, 10, 28, 2, 0, 0, 0, time.UTC), report.StatusDiscrepancies, -42)
	if err := h.RecordRun(ctx, rep); err != nil {
		t.Fatal(err)
	}
	m := history.Message{RunKey: rep.RunKey, WorkspaceID: rep.WorkspaceID, StoreID: rep.StoreID, TZ: rep.Window.TZ, Kind: history.KindAlert,
		Action: history.ActionPosted, Transport: history.TransportWebhook}
	var gap report.Day
	for _, d := range rep.Days {
		if d.Status == reconcile.Missing {
			gap = d
		}
	}
	if gap.Date == "" {
		t.Fatalf("the report has no missing day: %+v", rep.Days)
	}
	a := history.Alert{Date: gap.Date, Status: reconcile.Missing, Severity: reconcile.Fail, API: *gap.API, Local: *gap.Local, Delta: *gap.Delta,
		Transport: history.TransportWebhook, From: rep.Window.From, To: rep.Window.To, RunKey: rep.RunKey}
	if err := h.SaveAlerts(ctx, m, []history.Alert{a}); err != nil {
		t.Fatal(err)
	}
	_, d := localServeDir(t)
	logs := &logBuffer{}
	srv := httptest.NewServer(New(d, slog.New(slog.NewTextHandler(logs, nil)), true, WithHistory(h)))
	defer srv.Close()
	resp, body := get(t, srv, http.MethodGet, "/trend?from=2026-10-20&to=2026-10-31")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /trend: %s\n%s", resp.Status, logs.String())
	}
	for _, want := range []string{"the run history (HISTORY_DSN)", "<tr><td>alerted</td>", "missing<b>42</b>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the trend page lacks %q:\n%s", want, body)
		}
	}
}
