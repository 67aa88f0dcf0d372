package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/report/trend"
)

// cmdTrend is "clickrecon trend": the nights side by side, read from the
// reports in RECON_REPORT_DIR (a folder or a bucket), each calendar day by
// its latest verdict, with its weeks, months and causes. It only reads.
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
	from, to, rangeErr := trendRange(c.From, c.To, c.Nights, c.TZ, d.now())
	if err = errors.Join(err, rangeErr); err != nil {
		return usageExit(stderr, err)
	}
	t, err := trend.New(from, to)
	if err != nil {
		return usageExit(stderr, err)
	}
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

// trendRange is the range of days trend reads: --from to --to, or the
// nights days ending at --to, which is yesterday in tz when not given.
func trendRange(fromFlag, toFlag string, nights int, tz string, now time.Time) (from, to reconcile.Date, err error) {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return from, to, fmt.Errorf("--tz (RECON_TZ) %q is not an IANA time zone: %v", tz, err)
	}
	to = reconcile.DateOf(now.In(loc)).AddDays(-1)
	if toFlag != "" {
		if to, err = reconcile.ParseDate(toFlag); err != nil {
			return from, to, fmt.Errorf("--to (RECON_TO): %w", err)
		}
	}
	if fromFlag != "" {
		if from, err = reconcile.ParseDate(fromFlag); err != nil {
			return from, to, fmt.Errorf("--from (RECON_FROM): %w", err)
		}
	} else {
		if nights < 1 || nights > 3660 {
			return from, to, fmt.Errorf("--nights must be between 1 and 3660, got %d", nights)
		}
		from = to.AddDays(-(nights - 1))
	}
	if to.Before(from) {
		return from, to, fmt.Errorf("--to %s is before --from %s", to, from)
	}
	return from, to, nil
}
