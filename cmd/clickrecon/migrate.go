package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/report/history"
)

// cmdMigrate is "clickrecon migrate": it creates or upgrades the run
// history's tables at HISTORY_DSN. Running it again changes nothing.
func cmdMigrate(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer) int {
	c, err := parseArgs(ctx, "migrate", args, env, stdout, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	switch {
	case c.HistoryDSN == "":
		return usageExit(stderr, errors.New("HISTORY_DSN is not set: give postgres://USER@HOST/DB or sqlite:PATH (or HISTORY_DSN_FILE)"))
	case c.Timeout <= 0:
		return usageExit(stderr, fmt.Errorf("RECON_TIMEOUT must be positive, got %s", c.Timeout))
	}
	target, err := history.ParseMigrateDSN(c.HistoryDSN)
	if err != nil {
		return usageExit(stderr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	applied, err := history.Migrate(ctx, target)
	if err != nil {
		fmt.Fprintf(stderr, "clickrecon migrate: %v\n", err)
		if dsn.Refused(err) {
			return exitUsage // a wrong role, password, database or folder: fix HISTORY_DSN
		}
		return exitIncomplete
	}
	if len(applied) == 0 {
		fmt.Fprintln(stdout, "clickrecon migrate: the history is up to date")
		return exitOK
	}
	fmt.Fprintf(stdout, "clickrecon migrate: applied %s\n", strings.Join(applied, ", "))
	return exitOK
}
