package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/pgtest"
)

// uniqueWorkspace returns a workspace id no other test, and no other test
// run against the same server, locks: advisory locks are database-wide,
// not per schema.
func uniqueWorkspace(t *testing.T, name string) string {
	return fmt.Sprintf("%s-%s-%016x", t.Name(), name, rand.Uint64())
}

func TestLockExcludesASecondRunOfTheSameWorkspace(t *testing.T) {
	_, dsn := pgtest.New(t)
	ctx := context.Background()
	ws := uniqueWorkspace(t, "a")

	release, err := Lock(ctx, dsn, ws)
	if err != nil {
		t.Fatalf("first Lock: %v", err)
	}
	t.Cleanup(func() { release() })

	_, err = Lock(ctx, dsn, ws)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock of the same workspace: got %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), ws) {
		t.Errorf("error %q does not name the workspace %s", err, ws)
	}

	other, err := Lock(ctx, dsn, uniqueWorkspace(t, "b"))
	if err != nil {
		t.Fatalf("Lock of another workspace while the first is held: %v", err)
	}
	if err := other(); err != nil {
		t.Errorf("release of the other workspace: %v", err)
	}

	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := release(); err != nil {
		t.Errorf("second call of release: %v, want nil", err)
	}
	again, err := Lock(ctx, dsn, ws)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	if err := again(); err != nil {
		t.Errorf("release: %v", err)
	}
}

func TestLockDiesWithItsConnection(t *testing.T) {
	admin, dsn := pgtest.New(t)
	ctx := context.Background()
	ws := uniqueWorkspace(t, "a")

	release, err := Lock(ctx, dsn, ws)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}

	// Find the session that holds the lock, as an operator would, and
	// kill it: the process holding it could have crashed the same way.
	key := uint64(lockKey(ws))
	var pid int
	err = admin.QueryRowContext(ctx, `
		SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted
		  AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 1
		  AND a.application_name = $3`,
		key>>32, key&0xffffffff, lockApplicationName).Scan(&pid)
	if err != nil {
		t.Fatalf("find the session holding the lock in pg_locks: %v", err)
	}
	var killed bool
	if err := admin.QueryRowContext(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&killed); err != nil || !killed {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, killed, err)
	}

	// The backend exits shortly after the signal.
	deadline := time.Now().Add(10 * time.Second)
	for {
		again, err := Lock(ctx, dsn, ws)
		if err == nil {
			if err := again(); err != nil {
				t.Errorf("release of the new lock: %v", err)
			}
			break
		}
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("Lock after the holder died: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock was still held 10s after its session was terminated")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The dead holder's release reports that it had lost the lock, and
	// returns rather than hanging.
	if err := release(); err == nil {
		t.Error("release on a terminated connection: got nil, want an error")
	}
}

func TestLockSQLiteIsANoOp(t *testing.T) {
	ctx := context.Background()
	existing := filepath.Join(t.TempDir(), "store.db")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "history-not-migrated-yet.db")
	for _, dsn := range []string{"sqlite:" + existing, "sqlite:" + missing, "SQLITE://" + missing} {
		release, err := Lock(ctx, dsn, "48213")
		if err != nil {
			t.Fatalf("Lock(%s): %v", dsn, err)
		}
		second, err := Lock(ctx, dsn, "48213")
		if err != nil {
			t.Fatalf("second Lock(%s): %v, want nil (no lock on SQLite)", dsn, err)
		}
		if err := release(); err != nil {
			t.Errorf("release: %v", err)
		}
		if err := second(); err != nil {
			t.Errorf("release: %v", err)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("Lock created the SQLite file")
	}
}

func TestLockErrorsHideThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Nothing listens on port 1: the connection is refused at once.
	dsn := "postgres://recon:s3cret-pw@127.0.0.1:1/clicks?sslmode=disable&connect_timeout=2"
	_, err := Lock(ctx, dsn, "48213")
	if err == nil {
		t.Fatal("Lock on a closed port: got nil error")
	}
	if errors.Is(err, ErrLocked) {
		t.Errorf("Lock on a closed port: %v, must not be ErrLocked", err)
	}
	if strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("error shows the password: %v", err)
	}
	if !strings.Contains(err.Error(), "48213") {
		t.Errorf("error %q does not name the workspace", err)
	}

	if _, err := Lock(ctx, "mysql://u:p@host/db", "48213"); err == nil || errors.Is(err, ErrLocked) {
		t.Errorf("Lock with an unsupported DSN: %v, want a DSN error", err)
	}
}

func TestLockKeyIsStable(t *testing.T) {
	// These values are a contract with every other version of the job
	// running against the same database: changing them lets two runs of
	// one workspace overlap during an upgrade.
	tests := []struct {
		workspace string
		want      int64
	}{
		{"48213", -3627991854812924314},
		{"", -5141878501118356864},
	}
	for _, tt := range tests {
		if got := lockKey(tt.workspace); got != tt.want {
			t.Errorf("lockKey(%q) = %d, want %d", tt.workspace, got, tt.want)
		}
	}
	if lockKey("1") == lockKey("2") {
		t.Error("two workspaces share a key")
	}
}
