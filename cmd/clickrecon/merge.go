package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/job"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/storage"
)

// cmdMerge is "clickrecon merge REPORT...": it combines the reports of a
// sharded backfill (each a report.json, or the folder holding one, as a
// path or an s3://, gs://, azblob:// or file:// URL) into
// one report over the whole window, written like a run's. It reads no
// API and no database. A shard that cannot be read (a refused redirect
// included), or whose days were edited, exits 2 with nothing written.
func cmdMerge(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	c, paths, err := parseArgsWithOperands(ctx, "merge", args, env, stdout, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	if err := c.validateCommon(); err != nil {
		return usageExit(stderr, err)
	}
	if len(paths) < 2 {
		return usageExit(stderr, errors.New("merge needs the reports of at least two shards: clickrecon merge DIR/KEY1 DIR/KEY2 [DIR/KEY3 ...]"))
	}
	var shards []report.Report
	for _, path := range paths {
		r, err := storage.ReadReport(ctx, path)
		if err != nil {
			return usageExit(stderr, err)
		}
		// A merged report is only as true as its shards' days: one whose
		// days were edited is refused before anything is written.
		if err := r.CheckDays(); err != nil {
			return usageExit(stderr, fmt.Errorf("shard %s cannot be merged: %w", withoutQuery(path), err))
		}
		shards = append(shards, r)
	}
	merged, err := report.Merge(shards, d.now())
	if err != nil {
		return usageExit(stderr, err)
	}
	dir, err := storage.Write(c.ReportDir, merged)
	if err != nil {
		fmt.Fprintf(stderr, "clickrecon merge: %v\n", err)
		return exitIncomplete
	}
	if err := job.PrintSummary(stdout, c.Format, merged, dir); err != nil {
		return exitIncomplete
	}
	if failing(merged, c.failOn()) {
		return exitGaps
	}
	return exitOK
}

// withoutQuery returns a path or URL without its query, which may
// configure credentials.
func withoutQuery(path string) string {
	before, _, _ := strings.Cut(path, "?")
	return before
}
