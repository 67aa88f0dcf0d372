package tour

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/clickrecon/clickrecon/demo"
	"github.com/clickrecon/clickrecon/reconcile"
	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// ServeOptions are the settings of "clickrecon demo --serve".
type ServeOptions struct {
	Port       int    // --port; 0: a free one
	ClicksFile string // --clicks; "": the demo's own clicks
	Format     string // RECON_FORMAT: only text prints the instructions
	Loc        *time.Location
	MaxDays    int           // RECON_MAX_DAYS, which the runs it prints read too
	Settle     time.Duration // RECON_SETTLE, likewise
	Now        time.Time
}

// Serve is "clickrecon demo --serve": the simulated Elido API alone, on
// 127.0.0.1, counting the clicks of --clicks FILE (or the demo's own),
// until ctx ends (SIGINT or SIGTERM). It prints the variables and the
// commands that point a real run, on the user's own store, at it: the
// way to try clickrecon before having an Elido key. The zone is exported
// as RECON_TZ, so that every command after them (a repair too) reads the
// days alike, and the days the clicks span are given as the windows a
// run accepts: the days that have ended, at most RECON_MAX_DAYS a run.
// Its errors are the user's to fix (exit 2); it returns nil once stopped.
func Serve(ctx context.Context, o ServeOptions, stdout io.Writer) error {
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("--port must be from 0 (a free port) to 65535, got %d", o.Port)
	}
	loc := o.Loc
	source := "the demo's own"
	var clicks []elidotest.Click
	if o.ClicksFile != "" {
		f, err := os.Open(o.ClicksFile)
		if err != nil {
			return fmt.Errorf("--clicks: %w", err)
		}
		clicks, err = demo.ReadClicks(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("--clicks %s: %w", o.ClicksFile, err)
		}
		source = "from " + o.ClicksFile
	} else {
		from, _ := reconcile.ParseDate(demo.From)
		to, _ := reconcile.ParseDate(demo.To)
		clicks, _ = demo.Clicks(reconcile.Window{From: from, To: to, Loc: loc})
	}
	srv, err := elidotest.Serve(fmt.Sprintf("127.0.0.1:%d", o.Port), demo.Workspace, demo.Key, clicks)
	if err != nil {
		return fmt.Errorf("--port %d: %w (pick another port, or 0 for a free one)", o.Port, err)
	}
	defer srv.Close()
	first := reconcile.DateOf(clicks[0].TS.In(loc))
	last := reconcile.DateOf(clicks[len(clicks)-1].TS.In(loc))
	today := reconcile.DateOf(o.Now.In(loc))
	if o.Format == "text" {
		fmt.Fprintf(stdout, "clickrecon demo --serve: a simulated Elido API on %s counting %d clicks (%s), %s to %s in %s.\n\n"+
			"Point clickrecon run at it, with STORE_DSN set to your store (a run with --dry-run posts nothing\n"+
			"to Slack and records no history):\n\n"+
			"  export ELIDO_API_BASE=%s\n"+
			"  export ELIDO_API_KEY=%s\n"+
			"  export ELIDO_WORKSPACE_ID=%s\n"+
			"  export ELIDO_RATE_LIMIT=600 ELIDO_RETENTION_DAYS=0\n"+
			"  export RECON_TZ=%s\n",
			srv.URL(), len(clicks), source, first, last, loc, srv.URL(), demo.Key, demo.Workspace, loc)
		windows := trialWindows(first, last, today, o.MaxDays)
		for _, w := range windows {
			fmt.Fprintf(stdout, "  clickrecon run --from %s --to %s --dry-run\n", w.From, w.To)
		}
		fmt.Fprintln(stdout)
		if len(windows) > 1 {
			fmt.Fprintf(stdout, "One run per %d days: a run covers at most RECON_MAX_DAYS=%d.\n", o.MaxDays, o.MaxDays)
		}
		if !last.Before(today) {
			// A run refuses a day that has not ended; its clicks may
			// still arrive late.
			fmt.Fprintf(stdout, "The clicks of %s and later are left out: %s has not ended in %s. From %s 00:00 a run\n"+
				"can check it (clickrecon run --date %s --dry-run), provisional for RECON_SETTLE (%s) after.\n",
				today, today, loc, today.AddDays(1), today, o.Settle)
		}
		fmt.Fprintln(stdout, "It serves until Ctrl-C (SIGINT) or SIGTERM.")
	}
	<-ctx.Done()
	return nil
}

// trialWindows splits the days first..last that a run accepts today
// (those that have ended: up to the day before today) into windows of at
// most maxDays days, oldest first; none when no such day has ended.
func trialWindows(first, last, today reconcile.Date, maxDays int) []reconcile.Window {
	if ended := today.AddDays(-1); last.After(ended) {
		last = ended
	}
	var out []reconcile.Window
	for from := first; !from.After(last); from = from.AddDays(maxDays) {
		to := from.AddDays(maxDays - 1)
		if to.After(last) {
			to = last
		}
		out = append(out, reconcile.Window{From: from, To: to})
	}
	return out
}
