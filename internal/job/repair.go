package job

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/clickrecon/clickrecon/internal/repair"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/sources/store"
)

// The --repair modes of a run.
const (
	RepairOff   = ""
	RepairPrint = "print" // plan the repair of the missing days and write its files
	RepairApply = "apply" // and insert the clicks through Options.StoreWriteDSN
)

// findingRepair is the kind of the findings the repair stage adds: Slack
// shows them with the others.
const findingRepair = "repair"

// repairMissing is the run's opt-in repair stage: for the settled days the
// run found missing, it plans the repair (internal/repair), writes its
// files beside the report, and with RepairApply inserts them, one
// transaction per day. A dry run, or one without its lock, only prints.
// It returns findings that say what was repaired, or why not.
func repairMissing(ctx context.Context, d Deps, o Options, st *store.Store, res reconcile.Result, interrupted string) []report.Finding {
	if o.Repair == RepairOff || st == nil || interrupted != "" {
		return nil
	}
	var days []reconcile.Date
	for _, day := range res.Days {
		if day.Settled && day.Status == reconcile.Missing {
			days = append(days, day.Date)
		}
	}
	if len(days) == 0 {
		return nil
	}
	log := d.Log
	finding := func(format string, args ...any) report.Finding {
		return report.Finding{Kind: findingRepair, Message: fmt.Sprintf(format, args...)}
	}
	opts := repair.Options{Window: o.Window, Settle: o.Settle, Now: d.Now(), Query: o.Query, Days: days}
	plans, err := repair.Plan(ctx, d.Elido, st, opts)
	if err != nil {
		log.Error("repair not planned", "err", err)
		return []report.Finding{finding("no repair: %v", err)}
	}
	dir := filepath.Join(o.ReportDir, "repair-"+o.RunKey)
	if err := repair.WritePlan(dir, plans, !strings.HasPrefix(o.StoreDSN, "sqlite:")); err != nil {
		log.Error("repair plan not written: nothing applied", "err", err)
		return []report.Finding{finding("no repair: its plan could not be written: %v", err)}
	}
	var out []report.Finding
	apply := o.Repair == RepairApply && !o.DryRun && !o.Unlocked
	for _, p := range plans {
		for _, line := range repair.Describe(p, o.Window.Loc) {
			if apply && !strings.HasPrefix(line, "not repaired") {
				continue // the result says it
			}
			out = append(out, finding("%s", line))
		}
	}
	log.Info("repair planned", "days", len(plans), "dir", dir)
	if !apply {
		return out
	}
	if d.Held != nil {
		if err := d.Held(ctx); err != nil {
			log.Error("the run lock is no longer held: nothing repaired", "err", err)
			return append(out, finding("no repair: the run lock was lost before writing; run clickrecon repair --apply"))
		}
	}
	w, err := store.OpenWriter(ctx, o.StoreWriteDSN, o.RepairInsert)
	if err != nil {
		log.Error("store not opened for writing: nothing repaired", "err", err)
		return append(out, finding("no repair: the store could not be opened for writing through STORE_WRITE_DSN (the log says why)"))
	}
	defer w.Close()
	byDay := map[reconcile.Date]repair.DayPlan{}
	for _, p := range plans {
		byDay[p.Day] = p
	}
	j := repair.FileJournal{Path: filepath.Join(dir, "apply.log"), Now: d.Now}
	for _, r := range repair.Apply(ctx, w, st, opts, plans, j, nil) {
		if r.Err != nil {
			log.Error("day not repaired", "day", r.Day.String(), "err", r.Err)
		} else {
			log.Info("day repaired", "day", r.Day.String(), "inserted", r.Inserted, "matches", r.Matches())
		}
		out = append(out, finding("%s", repair.DescribeResult(byDay[r.Day], r, o.Window.Loc)))
	}
	return out
}
