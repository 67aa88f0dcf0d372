// Package benchkit holds what the whole-run harnesses (bench/recon-bench,
// bench/fleet-bench) share: a binary's pages dropped before it is
// measured, a PostgreSQL DSN narrowed to a schema, a flag's default from
// the environment.
package benchkit

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
)

// WithSearchPath returns dsn with its connections' search_path set to
// schema, which lib/pq passes on as a run-time parameter.
func WithSearchPath(dsn, schema string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("-dsn: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// EnvOr is the variable name, or def when it is unset or empty.
func EnvOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Main runs a harness: run under a context that SIGINT or SIGTERM ends,
// and an error printed after name, with exit 1.
func Main(name string, run func(context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// Build builds ./cmd/clickrecon (from the repository's root) into dir
// and returns the binary's path.
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "clickrecon")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/clickrecon")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return bin, fmt.Errorf("go build ./cmd/clickrecon (run from the repository root): %w", err)
	}
	return bin, nil
}
