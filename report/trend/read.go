package trend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/storage"
)

// Read adds to t the report of every whole run in d of workspaceID (""
// for every workspace) whose window meets t's range, one report at a
// time: only the verdicts t keeps stay in memory. The runs of a fleet's
// workspaces, each in a folder of its name under d (storage.Sub), are
// read too. A folder being written or of another tool is passed over,
// as serve's index passes it over; a report that changed while it was
// read is read again once. It returns how many reports it read.
func Read(ctx context.Context, d *storage.Dest, t *Trend, workspaceID string) (int, error) {
	read, err := readRuns(ctx, d, t, workspaceID)
	if err != nil {
		return read, err
	}
	names, err := d.WorkspaceNames(ctx)
	if err != nil {
		return read, err
	}
	for _, name := range names {
		sub, _ := d.Sub(name)
		n, err := readRuns(ctx, sub, t, workspaceID)
		read += n
		if err != nil {
			return read, err
		}
	}
	return read, nil
}

// readRuns is Read of the runs directly under d.
func readRuns(ctx context.Context, d *storage.Dest, t *Trend, workspaceID string) (int, error) {
	runs, err := d.Runs(ctx)
	if err != nil {
		return 0, fmt.Errorf("list the reports in %s: %w", d.Base(), err)
	}
	read := 0
	for _, r := range runs {
		if r.Partial || r.Report.RunKey == "" {
			continue
		}
		if workspaceID != "" && r.Report.WorkspaceID != workspaceID {
			continue
		}
		if !t.Covers(r.Report.Window) {
			continue
		}
		rep, err := readRun(ctx, d, r.Key)
		if errors.Is(err, storage.ErrConcurrentWrite) {
			rep, err = readRun(ctx, d, r.Key)
		}
		if errors.Is(err, storage.ErrNoReport) {
			continue // pruned or rewritten since it was listed
		}
		if err != nil {
			return read, err
		}
		if err := t.Add(rep); err != nil {
			return read, err
		}
		read++
	}
	return read, nil
}

// readRun reads the whole report.json of run runKey.
func readRun(ctx context.Context, d *storage.Dest, runKey string) (report.Report, error) {
	f, err := d.OpenRunFile(ctx, runKey, "report.json")
	if err != nil {
		return report.Report{}, err
	}
	var rep report.Report
	decErr := json.NewDecoder(f).Decode(&rep)
	if err := f.Close(); err != nil {
		return report.Report{}, fmt.Errorf("read the report of run %s: %w", runKey, err)
	}
	if decErr != nil {
		return report.Report{}, fmt.Errorf("read the report of run %s: %w", runKey, decErr)
	}
	return rep, nil
}

// ReadHistory adds to t every run h recorded of workspaceID ("" for
// every workspace) whose window meets t's range, one run at a time, and
// when Slack was told of its alerted days; it returns how many runs it
// read.
func ReadHistory(ctx context.Context, h *history.History, t *Trend, workspaceID string) (int, error) {
	n, alerts, err := h.ReadTrend(ctx, workspaceID, t.from, t.to, t.Add)
	if err != nil {
		return n, err
	}
	t.AddAlerts(alerts)
	return n, nil
}
