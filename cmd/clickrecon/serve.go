package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/internal/console"
	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/report/history"
	"github.com/clickrecon/clickrecon/report/storage"
	"github.com/clickrecon/clickrecon/report/viewer"
)

// serveAddr is where serve listens unless --addr says otherwise: the
// loopback only, which kubectl port-forward reaches inside a pod and
// nothing else does.
const serveAddr = "127.0.0.1:8080"

// cmdServe is "clickrecon serve": a read-only HTTP server over the
// report destination (RECON_REPORT_DIR, a folder or an object store), so
// that a night's report on a claim or in a bucket can be opened. It never
// writes nor deletes there.
func cmdServe(ctx context.Context, args []string, env envconfig.Lookuper, stdout, stderr io.Writer) int {
	c, rest, err := parseArgsWithOperands(ctx, "serve", args, env, stdout, stderr)
	if flagStop(err) {
		return usageExit(stderr, err)
	}
	if len(rest) > 0 {
		return usageExit(stderr, unexpectedArg("serve", rest))
	}
	// Only the variables serve reads count: a bad one of run's is not
	// serve's to refuse.
	err = c.CheckLogging()
	if _, _, splitErr := net.SplitHostPort(c.Addr); splitErr != nil {
		err = errors.Join(fmt.Errorf("--addr %q is not HOST:PORT (e.g. %s): %v", c.Addr, serveAddr, splitErr), err)
	}
	if err != nil {
		return usageExit(stderr, err)
	}
	d, err := storage.Open(ctx, c.ReportDir)
	if err != nil {
		return usageExit(stderr, fmt.Errorf("RECON_REPORT_DIR: %w", err))
	}
	defer d.Close()
	if ok, err := d.IsDir(); err != nil || !ok {
		return usageExit(stderr, fmt.Errorf("RECON_REPORT_DIR %s is not a folder: give the folder the runs write to (--report-dir)", d.Base()))
	}
	log := console.NewLogger(console.NewBar(stderr), c.LogFormat, c.LogLevel)
	var opts []viewer.Option
	if c.HistoryDSN != "" {
		// The trend page reads the run history, as clickrecon trend does.
		target, err := history.ParseDSN(c.HistoryDSN)
		if err != nil {
			return usageExit(stderr, fmt.Errorf("HISTORY_DSN: %w", err))
		}
		h, err := history.Open(ctx, target)
		switch {
		case errors.Is(err, history.ErrNotMigrated):
			return usageExit(stderr, fmt.Errorf("HISTORY_DSN: %w", dsn.RedactError(err, target.Secrets)))
		case err != nil:
			log.Warn("the run history could not be opened: the trend page reads the reports", "err", dsn.RedactError(err, target.Secrets))
		default:
			defer h.Close()
			opts = append(opts, viewer.WithHistory(h))
		}
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		fmt.Fprintf(stderr, "clickrecon serve: %v\n", err)
		return exitUsage
	}
	addr := viewer.Address(c.Addr, ln.Addr())
	log.Info("serving reports", "report_dir", d.Base(), "url", addr)
	fmt.Fprintf(stdout, "clickrecon serve: the reports in %s are at %s (stop with Ctrl-C)\n", d.Base(), addr)
	if err := viewer.Serve(ctx, ln, viewer.New(d, log, viewer.IsLoopback(ln.Addr()), opts...), log); err != nil {
		fmt.Fprintf(stderr, "clickrecon serve: %v\n", err)
		return exitIncomplete
	}
	return exitOK
}
