package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/config"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/report/trend"
)

// cmdTrend is "clickrecon trend": the nights side by side, read from the
// run history at HISTORY_DSN when it is set, else from the reports in
// RECON_REPORT_DIR (a folder or a bucket), each calendar day by its latest
// verdict, with its weeks, months and causes. It only reads.
func cmdTrend(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	c, err := parseArgs(ctx, "trend", args, env, stdout, stderr)
	if flagStop(err) {
		return usageExit(stderr, err)
	}
	// Only what trend reads counts: a bad variable of run's is not
	// trend's to refuse.
	err = c.CheckLogging()
	if c.Format != "text" && c.Format != "json" && c.Format != "csv" {
		err = errors.Join(err, fmt.Errorf("--format (RECON_FORMAT) must be text, json or csv, got %q", c.Format))
	}
	if c.By != "day" && c.By != "week" && c.By != "month" {
		err = errors.Join(err, fmt.Errorf("--by must be day, week or month, got %q", c.By))
	}
	var from, to reconcile.Date
	loc, rangeErr := time.LoadLocation(c.TZ)
	if rangeErr != nil {
		err = errors.Join(err, fmt.Errorf("--tz (RECON_TZ) %q is not an IANA time zone: %v", c.TZ, rangeErr))
	} else if from, to, rangeErr = trend.Range(c.From, c.To, strconv.Itoa(c.Nights), d.now().In(loc)); rangeErr != nil {
		err = errors.Join(err, fmt.Errorf("the range (--from, --to, --nights): %w", rangeErr))
	}
	if err != nil {
		return usageExit(stderr, err)
	}
	if file, _ := env.Lookup(config.FleetFileVar); file != "" && c.Workspace != "" {
		// In a fleet, --workspace may name an entry: its workspace id.
		if fleet, err := config.LoadFleet(file); err == nil {
			if e, err := fleet.Entry(c.Workspace); err == nil {
				c.Workspace = e.Vars["ELIDO_WORKSPACE_ID"]
			}
		}
	}
	t, err := trend.New(from, to)
	if err != nil {
		return usageExit(stderr, err)
	}
	if c.HistoryDSN != "" {
		// The history holds every recorded run, reports pruned or not.
		target, err := history.ParseDSN(c.HistoryDSN)
		if err != nil {
			return usageExit(stderr, fmt.Errorf("HISTORY_DSN: %w", err))
		}
		h, err := history.Open(ctx, target)
		if err != nil {
			fmt.Fprintf(stderr, "clickrecon trend: %v\n", err)
			if errors.Is(err, history.ErrNotMigrated) {
				return exitUsage
			}
			return exitIncomplete
		}
		defer h.Close()
		if _, err := trend.ReadHistory(ctx, h, t, c.Workspace); err != nil {
			fmt.Fprintf(stderr, "clickrecon trend: %v\n", dsn.RedactError(err, target.Secrets))
			return exitIncomplete
		}
	} else {
		dest, err := storage.Open(ctx, c.ReportDir)
		if err != nil {
			return usageExit(stderr, fmt.Errorf("RECON_REPORT_DIR: %w", err))
		}
		defer dest.Close()
		if ok, err := dest.IsDir(); err != nil || !ok {
			return usageExit(stderr, fmt.Errorf("RECON_REPORT_DIR %s is not a folder: give the folder the runs write to (--report-dir)", dest.Base()))
		}
		if _, err := trend.Read(ctx, dest, t, c.Workspace); err != nil {
			fmt.Fprintf(stderr, "clickrecon trend: %v\n", err)
			return exitIncomplete
		}
	}
	series := t.Series()
	switch c.Format {
	case "json":
		err = trend.WriteJSON(stdout, series)
	case "csv":
		err = trend.WriteCSV(stdout, series, c.By)
	default:
		err = trend.WriteText(stdout, series, c.By)
	}
	if err != nil {
		fmt.Fprintf(stderr, "clickrecon trend: %v\n", err)
		return exitIncomplete
	}
	return exitOK
}
