package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/job"
)

// cmdMerge is "clickrecon merge REPORT...": job.Merge combines the
// reports of a sharded backfill into one report over the whole window,
// written like a run's. A shard that cannot be read, or whose days were
// edited, exits 2 with nothing written.
func cmdMerge(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	c, paths, err := parseArgsWithOperands(ctx, "merge", args, env, stdout, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	if err := c.ValidateCommon(); err != nil {
		return usageExit(stderr, err)
	}
	if len(paths) < 2 {
		return usageExit(stderr, errors.New("merge needs the reports of at least two shards: clickrecon merge DIR/KEY1 DIR/KEY2 [DIR/KEY3 ...]"))
	}
	code, err := job.Merge(ctx, job.MergeOptions{Paths: paths, ReportDir: c.ReportDir, Format: c.Format, FailOn: c.FailOnSeverity(), Now: d.now()}, stdout)
	switch {
	case code == exitUsage:
		return usageExit(stderr, err)
	case err != nil:
		fmt.Fprintf(stderr, "clickrecon merge: %v\n", err)
	}
	return code
}
