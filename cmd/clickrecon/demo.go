package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/demo"
	"github.com/clickrecon/clickrecon/demo/tour"
	"github.com/clickrecon/clickrecon/internal/console"
	"github.com/clickrecon/clickrecon/reconcile"
)

// cmdDemo is "clickrecon demo": the real pipeline against a simulated
// Elido API on loopback and an embedded SQLite store that lost some
// clicks and recorded others twice (tour.Run), or with --serve the
// simulated API alone (tour.Serve). It reads no variable but LOG_LEVEL and
// LOG_FORMAT (and with --serve RECON_MAX_DAYS and RECON_SETTLE), needs no
// network and no secret.
func cmdDemo(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	vars := map[string]string{
		"RECON_REPORT_DIR": "clickrecon-demo",
		"RECON_TZ":         demo.Zone,
		"LOG_FORMAT":       "text",
		"LOG_LEVEL":        "warn",
	}
	for _, name := range []string{"LOG_LEVEL", "LOG_FORMAT"} {
		if v, ok := env.Lookup(name); ok {
			vars[name] = v
		}
	}
	c, err := parseArgs(ctx, "demo", args, envconfig.MapLookuper(vars), stdout, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	if c.Serve {
		// The runs it prints read these two from the same environment:
		// its windows must be ones they accept.
		for _, name := range []string{"RECON_MAX_DAYS", "RECON_SETTLE"} {
			if v, ok := env.Lookup(name); ok {
				vars[name] = v
			}
		}
		if c, err = parseArgs(ctx, "demo", args, envconfig.MapLookuper(vars), stdout, stderr); err != nil {
			return usageExit(stderr, err)
		}
	}
	if err := c.ValidateCommon(); err != nil {
		return usageExit(stderr, err)
	}
	loc, err := reconcile.LoadZone(c.TZ)
	if err != nil {
		return usageExit(stderr, err)
	}
	if c.Serve {
		err := tour.Serve(ctx, tour.ServeOptions{Port: c.Port, ClicksFile: c.ClicksFile, Format: c.Format, Loc: loc,
			MaxDays: c.MaxDays, Settle: c.Settle, Now: d.now()}, stdout)
		if err != nil {
			return usageExit(stderr, err)
		}
		fmt.Fprintln(stderr, "clickrecon demo --serve: stopped")
		return exitOK
	}
	if c.Port != 0 || c.ClicksFile != "" {
		return usageExit(stderr, errors.New("--port and --clicks go with --serve"))
	}
	bar := console.NewBar(stderr)
	code, err := tour.Run(ctx, tour.Options{Run: options(c, reconcile.Window{}), Loc: loc,
		Log: console.NewLogger(bar, c.LogFormat, c.LogLevel), Progress: bar, Elido: d.elido, Now: d.now}, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "clickrecon demo: %v\n", err)
	}
	return code
}
