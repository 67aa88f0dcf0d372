package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/config"
	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/sources/store"
)

// runSetup is what a run's configuration resolves to before it reads
// anything: the window, the parsed DSNs, the store's query and timestamp
// zone, the monitors, the report destination and the repair's insert.
type runSetup struct {
	window       reconcile.Window
	dsns         config.DSNs
	query        store.Query
	tsZone       *time.Location
	mon          job.Monitors
	dest         *storage.Dest
	repair       job.RepairMode
	repairInsert string
}

// configureRun parses run's flags and variables and checks all of them,
// listing every mistake at once (a missing ELIDO_API_KEY does not hide a
// bad --date). Nothing here touches the network or a database; opening the
// report destination reads its URL and credentials' settings and sends
// nothing. The caller closes setup.dest.
//
// name is the command: run, or check, which checks what run would.
func configureRun(ctx context.Context, name string, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) (config.Config, runSetup, error) {
	var s runSetup
	c, envErr := parseArgs(ctx, name, joinRepairValue(args), env, stdout, stderr)
	if flagStop(envErr) {
		return c, s, envErr
	}
	errs := []error{envErr}
	var err error
	s.window, s.dsns, err = c.ValidateRun(d.now())
	errs = append(errs, err)
	s.query, err = store.LoadQuery(c.StorePreset, c.StoreQueryFile, c.StoreTotalFile)
	errs = append(errs, err)
	s.tsZone, err = store.TimestampZone(c.StoreTSZone)
	errs = append(errs, err)
	if err == nil && !s.dsns.Store.IsZero() {
		errs = append(errs, store.CheckZone(s.dsns.Store, s.query, s.tsZone, false))
	}
	s.mon, err = job.NewMonitors(c.PushgatewayURL, c.HealthcheckURL, d.monitor...)
	errs = append(errs, err)
	if s.mon.Push != nil && d.workspace != "" {
		s.mon.Push = s.mon.Push.ForFleetEntry(d.workspace)
	}
	errs = append(errs, c.CheckSlack())
	var warning string
	s.repair, warning, err = c.RunRepair()
	if warning != "" {
		fmt.Fprintf(stderr, "clickrecon: warning: %s\n", warning)
	}
	errs = append(errs, err)
	if err == nil {
		s.repairInsert, s.dsns.StoreWrite, err = c.ValidateRunRepair(s.repair)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return c, s, err
	}
	if s.dest, err = storage.Open(ctx, c.ReportDir); err != nil {
		return c, s, fmt.Errorf("--report-dir (RECON_REPORT_DIR): %w", err)
	}
	return c, s, nil
}
