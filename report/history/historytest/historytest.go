// Package historytest opens run histories for tests: migrated as
// clickrecon migrate leaves them, then opened as a run opens them.
package historytest

import (
	"context"
	"testing"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/report/history"
)

// Target migrates the history at rawDSN (a HISTORY_DSN) and returns it
// as a run opens it.
func Target(t testing.TB, rawDSN string) dsn.Target {
	t.Helper()
	mt, err := history.ParseMigrateDSN(rawDSN)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := history.Migrate(context.Background(), mt); err != nil {
		t.Fatal(err)
	}
	ot, err := history.ParseDSN(rawDSN)
	if err != nil {
		t.Fatal(err)
	}
	return ot
}

// Open migrates the history at rawDSN and opens it; it is closed when
// the test ends.
func Open(t testing.TB, rawDSN string) *history.History {
	t.Helper()
	h, err := history.Open(context.Background(), Target(t, rawDSN))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}
