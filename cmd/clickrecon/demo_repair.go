package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/clickrecon/clickrecon/internal/demo"
	"github.com/clickrecon/clickrecon/internal/repair"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// demoRepair shows clickrecon repair on the demo's world: the lost burst
// is found, printed, applied to the demo's SQLite store (its own
// STORE_WRITE_DSN), and the day re-counted. It returns the repair's exit
// code.
func demoRepair(ctx context.Context, world *demo.World, client *elido.Client, c config, runKey string, now time.Time, log *slog.Logger, stdout io.Writer) int {
	query, err := store.PresetQuery(store.PresetEvents)
	if err != nil {
		return exitIncomplete
	}
	st, err := store.Open(ctx, world.StoreDSN)
	if err != nil {
		log.Error("demo store not opened", "err", err)
		return exitIncomplete
	}
	defer st.Close()
	w, err := store.OpenWriter(ctx, world.StoreDSN, "")
	if err != nil {
		log.Error("demo store not opened for writing", "err", err)
		return exitIncomplete
	}
	defer w.Close()
	fmt.Fprintf(stdout, "\nclickrecon repair --apply puts the lost clicks back (STORE_WRITE_DSN is the demo's store):\n\n")
	return runRepair(ctx, repairRun{
		api: client, store: st, writer: w, log: log, stdout: stdout,
		opts: repair.Options{Window: world.Window, Settle: c.Settle, Now: now, Query: query},
		dir:  filepath.Join(c.ReportDir, "repair-"+runKey),
	})
}
