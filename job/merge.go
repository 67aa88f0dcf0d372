package job

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/report"
	"github.com/clickrecon/clickrecon/report/storage"
)

// MergeOptions are the validated settings of one "clickrecon merge".
type MergeOptions struct {
	// Paths are the shards' reports: each a report.json, or the folder
	// holding one, as a path or an s3://, gs://, azblob:// or file:// URL.
	Paths     []string
	ReportDir string             // RECON_REPORT_DIR, where the merged report is written
	Format    string             // RECON_FORMAT: what stdout shows, text or json
	FailOn    reconcile.Severity // --fail-on; "": none
	Now       time.Time
}

// Merge is "clickrecon merge": it combines the reports of a sharded
// backfill into one report over the whole window, written like a run's,
// and prints its summary. It reads no API and no database. It returns the
// exit code and, when it is 2 or the merged report was not written, why:
// a shard that cannot be read (a refused redirect included), or whose
// days were edited, exits 2 with nothing written.
func Merge(ctx context.Context, o MergeOptions, stdout io.Writer) (int, error) {
	var shards []report.Report
	for _, path := range o.Paths {
		r, err := storage.ReadReport(ctx, path)
		if err != nil {
			return ExitUsage, err
		}
		// A merged report is only as true as its shards' days: one whose
		// days were edited is refused before anything is written.
		if err := r.CheckDays(); err != nil {
			return ExitUsage, fmt.Errorf("shard %s cannot be merged: %w", withoutQuery(path), err)
		}
		shards = append(shards, r)
	}
	merged, err := report.Merge(shards, o.Now)
	if err != nil {
		return ExitUsage, err
	}
	dir, err := storage.Write(o.ReportDir, merged)
	if err != nil {
		return ExitIncomplete, err
	}
	if err := printSummary(stdout, o.Format, merged, dir); err != nil {
		return ExitIncomplete, nil
	}
	if failing(merged, o.FailOn) {
		return ExitGaps, nil
	}
	return ExitOK, nil
}

// withoutQuery returns a path or URL without its query, which may
// configure credentials.
func withoutQuery(path string) string {
	before, _, _ := strings.Cut(path, "?")
	return before
}
