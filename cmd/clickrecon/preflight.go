package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/check"
	"github.com/clickrecon/clickrecon/internal/dsn"
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
	dsns         dsns
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
func configureRun(ctx context.Context, name string, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) (config, runSetup, error) {
	var s runSetup
	c, envErr := parseArgs(ctx, name, joinRepairValue(args), env, stdout, stderr)
	if flagStop(envErr) {
		return c, s, envErr
	}
	errs := []error{envErr}
	var err error
	s.window, s.dsns, err = c.validateRun(d.now())
	errs = append(errs, err)
	s.query, err = store.LoadQuery(c.StorePreset, c.StoreQueryFile, c.StoreTotalFile)
	errs = append(errs, err)
	s.tsZone, err = store.TimestampZone(c.StoreTSZone)
	errs = append(errs, err)
	if err == nil && !s.dsns.store.IsZero() {
		errs = append(errs, store.CheckZone(s.dsns.store, s.query, s.tsZone, false))
	}
	s.mon, err = job.NewMonitors(c.PushgatewayURL, c.HealthcheckURL, d.monitor...)
	errs = append(errs, err)
	errs = append(errs, c.checkSlack())
	var warning string
	s.repair, warning, err = c.runRepair()
	if warning != "" {
		fmt.Fprintf(stderr, "clickrecon: warning: %s\n", warning)
	}
	errs = append(errs, err)
	if err == nil {
		s.repairInsert, s.dsns.storeWrite, err = c.validateRunRepair(s.repair)
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

// probeSources checks, before the first request to Elido, that the store
// opens and its query fits it (check.Store), that the history, if
// HISTORY_DSN is set, exists (a SQLite file), opens and is migrated
// (check.History), and that the report destination takes a write
// (check.Reports): what clickrecon check asks of them too. It returns the
// mistakes that only the configuration can mend (exit 2), each naming what
// to fix, by the part of a run they are a failure of (the store, the
// history down, the report storage), so that the end of the run tells
// them as a run would. A failure a retry may mend (a refused or lost
// connection, a timeout) is not returned: the run goes on, meets it where
// it reads or writes, and exits 3, as it would without the probe.
func probeSources(ctx context.Context, c config, s runSetup) []job.Failure {
	// The whole probe within RECON_TIMEOUT, as the run is: a shorter
	// deadline than check's own bounds the history and report probes too.
	ctx, cancel := context.WithTimeout(ctx, min(c.Timeout, check.Timeout))
	defer cancel()
	var fs []job.Failure
	if err := probeStore(ctx, c, s.dsns.store, s.query, s.tsZone, s.window); err != nil {
		fs = append(fs, job.Failure{Part: job.PartStore, Err: err})
	}
	switch {
	case s.dsns.historyMissing != nil:
		// A SQLite history deleted overnight (or never migrated): told as
		// a history that is down, with what to run.
		fs = append(fs, job.Failure{Part: job.PartHistoryDown, Err: fmt.Errorf("HISTORY_DSN: %w", s.dsns.historyMissing)})
	case !s.dsns.history.IsZero():
		if err, retry := check.History(ctx, s.dsns.history); err != nil && !retry {
			fs = append(fs, job.Failure{Part: job.PartHistoryDown, Err: err})
		}
	}
	if err, retry := check.Reports(ctx, s.dest); err != nil && !retry {
		fs = append(fs, job.Failure{Part: job.PartReport, Err: err})
	}
	return fs
}

// probeStore is the store's part of probeSources, which repair runs too:
// the mistake in STORE_DSN or the store query that only the configuration
// can mend, naming what to fix, else nil.
func probeStore(ctx context.Context, c config, st dsn.Target, q store.Query, tsZone *time.Location, w reconcile.Window) error {
	ctx, cancel := context.WithTimeout(ctx, min(c.Timeout, check.Timeout))
	defer cancel()
	err, retry := check.Store(ctx, check.Spec{Store: st, StoreOptions: store.Options{TimestampZone: tsZone}, Query: q,
		QueryFile: c.StoreQueryFile, Day: w.From, Loc: w.Loc})
	if retry {
		return nil
	}
	return err
}

// failuresErr joins the failures' errors, for stderr.
func failuresErr(fs []job.Failure) error {
	var errs []error
	for _, f := range fs {
		errs = append(errs, f.Err)
	}
	return errors.Join(errs...)
}
