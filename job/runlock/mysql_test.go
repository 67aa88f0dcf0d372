package runlock

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/mysqltest"
)

// A MySQL store without a history is locked with a named lock: a second
// run of the workspace is refused while the first holds it, another
// workspace is not, a killed session loses it (Held says so) and frees it.
func TestMySQLNamedLock(t *testing.T) {
	db, raw := mysqltest.New(t)
	store := target(t, raw)
	if got := On(dsn.Target{}, store); got.Conn != store.Conn {
		t.Fatalf("On(no history, MySQL store) = %s, want the store", got)
	}
	ctx := t.Context()
	first, err := Take(ctx, store, "48213")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	if !strings.HasPrefix(first.String(), "named lock on mysql://") {
		t.Errorf("String() = %q", first.String())
	}
	if _, err := Take(ctx, store, "48213"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Take: %v, want ErrLocked", err)
	}
	other, err := Take(ctx, store, "77777")
	if err != nil {
		t.Fatalf("another workspace: %v", err)
	}
	if err := other.Release(); err != nil {
		t.Errorf("Release: %v", err)
	}
	if err := first.Held(ctx); err != nil {
		t.Fatalf("Held: %v", err)
	}

	// The server ends the holder's session (a failover, KILL).
	var id int64
	if err := db.Get(&id, "SELECT IS_USED_LOCK(?)", mysqlLockName("48213")); err != nil {
		t.Fatal(err)
	}
	db.MustExec(fmt.Sprintf("KILL CONNECTION %d", id))
	if err := first.Held(ctx); !errors.Is(err, ErrLost) {
		t.Errorf("Held after KILL: %v, want ErrLost", err)
	}
	again, err := Take(ctx, store, "48213")
	if err != nil {
		t.Fatalf("Take after the holder's session ended: %v", err)
	}
	again.Release()
	if err := first.Release(); err == nil {
		t.Error("Release of a lost lock returned nil")
	}
}
