package storage

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/internal/fixture"
)

// A store count of 2^63−1 on one day. The day is
// unverifiable, the totals do not wrap, and every report file is written
// well within the run's deadline.
func TestWriteWithACountAtInt64Max(t *testing.T) {
	w := reconcile.Window{From: fixture.Date("2026-11-26"), To: fixture.Date("2026-11-28"), Loc: time.UTC}
	res := reconcile.Compare(reconcile.Input{
		Window: w, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), Tolerance: reconcile.Tolerance{FailAbs: 10},
		API: map[reconcile.Date]reconcile.Reading{
			fixture.Date("2026-11-26"): reconcile.Known(40), fixture.Date("2026-11-27"): reconcile.Known(math.MaxInt64), fixture.Date("2026-11-28"): reconcile.Known(40)},
		Local: map[reconcile.Date]reconcile.Reading{
			fixture.Date("2026-11-26"): reconcile.Known(40), fixture.Date("2026-11-27"): reconcile.Known(math.MaxInt64), fixture.Date("2026-11-28"): reconcile.Known(40)},
	})
	r := report.New(res, w, report.Meta{RunKey: "k", WorkspaceID: "48213", GeneratedAt: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if diff := cmp.Diff(report.Totals{API: 80, Local: 80}, r.Totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	if r.Days[1].Status != "unverifiable" || r.Status != report.StatusIncomplete {
		t.Errorf("day %s, report %s; want unverifiable, incomplete", r.Days[1].Status, r.Status)
	}
	dir := t.TempDir()
	done := make(chan error, 1)
	go func() { _, err := Write(dir, r); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the report was not written within 10s")
	}
	page, err := os.ReadFile(filepath.Join(dir, "k", "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	fixture.CheckWellFormed(t, page)
}

func TestWriteReplacesWholeFiles(t *testing.T) {
	dir := t.TempDir()
	r := sample(t)
	out, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if out != filepath.Join(dir, r.RunKey) {
		t.Errorf("folder %s, want %s", out, filepath.Join(dir, r.RunKey))
	}
	r.Status = report.StatusOK
	if _, err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"countries.csv", "days.csv", "diagnoses.csv", "hours.csv", "links.csv", "report.html", "report.json", "report.md"}, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	var back report.Report
	b, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if err := json.Unmarshal(b, &back); err != nil || back.Status != report.StatusOK {
		t.Errorf("rewritten report: status %q, err %v", back.Status, err)
	}
}

// sample is the report package's sample report (see fixture.Sample).
func sample(t *testing.T) report.Report {
	t.Helper()
	res, w, m := fixture.Sample(t)
	return report.New(res, w, report.Meta{RunKey: report.RunKey(m.WorkspaceID, w, m.Store), WorkspaceID: m.WorkspaceID, StoreID: report.StoreID(m.Store),
		GeneratedAt: m.GeneratedAt, Requests: m.Requests, Drilldown: report.Drilldown{Mode: m.DrillMode, Requests: m.DrillRequests}})
}
