package main

import (
	"context"
	"io"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/check"
	"github.com/clickrecon/clickrecon/report/alert"
	"github.com/clickrecon/clickrecon/sources/elido"
	"github.com/clickrecon/clickrecon/sources/store"
)

// cmdCheck is "clickrecon check": the configuration is read and checked
// as run checks it (exit 2 on a mistake, all listed), then every
// dependency it names is probed (package check), one line each. With
// --offline, nothing goes over the network.
func cmdCheck(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer, d deps) int {
	c, setup, err := configureRun(ctx, "check", args, env, stdout, stderr, d)
	if err != nil {
		return usageExit(stderr, err)
	}
	defer setup.dest.Close()
	spec := check.Spec{
		Offline:      c.Offline,
		Store:        setup.dsns.Store,
		StoreOptions: store.Options{TimestampZone: setup.tsZone},
		Query:        setup.query,
		QueryFile:    c.StoreQueryFile,
		Day:          setup.window.To,
		Loc:          setup.window.Loc,
		StoreWrite:   setup.dsns.StoreWrite,
		RepairInsert: setup.repairInsert,
		History:      setup.dsns.History,
		HistoryGone:  setup.dsns.HistoryMissing,
		Reports:      setup.dest,
		ReportDir:    c.ReportDir,
		Workspace:    c.WorkspaceID,
		Push:         setup.mon.Push,
		Health:       setup.mon.Health,
	}
	if spec.StoreWrite.IsZero() && c.StoreWriteDSN != "" { // set, and no --repair asked for it
		if spec.StoreWrite, err = store.ParseWriteDSN(c.StoreWriteDSN); err != nil {
			return usageExit(stderr, err)
		}
	}
	if spec.Slack, err = alert.New(c.Slack(), d.alert...); err != nil {
		return usageExit(stderr, err)
	}
	if !c.Offline {
		ec := c.Elido()
		ec.MaxAttempts = 1 // a check asks once: a retry is the user's
		if spec.Elido, err = elido.New(ec, d.elido...); err != nil {
			return usageExit(stderr, err)
		}
	}
	lines := check.Run(ctx, spec)
	check.Write(stdout, lines)
	return check.Exit(lines)
}
