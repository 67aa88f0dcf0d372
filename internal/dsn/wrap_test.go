package dsn

import (
	"context"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"testing"
)

// Wrap is in the path of every connection Open's pool makes: what it
// refuses never reaches the database.
func TestWrapSeesEveryConnection(t *testing.T) {
	tgt, err := Parse("sqlite:"+filepath.Join(t.TempDir(), "w.db"), Options{Name: "STORE_DSN", Mode: ReadWriteCreate})
	if err != nil {
		t.Fatal(err)
	}
	var connects int
	refuse := false
	tgt.Wrap = func(c driver.Connector) driver.Connector { return wrapped{c, &connects, &refuse} }
	db, err := tgt.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	if connects != 1 {
		t.Fatalf("the wrapper saw %d connections, want 1", connects)
	}
	db.SetMaxIdleConns(0) // the next query needs a new connection
	refuse = true
	if _, err := db.Exec("CREATE TABLE t (x int)"); !errors.Is(err, errRefused) {
		t.Fatalf("a refused connection gave %v, want the wrapper's error", err)
	}
}

var errRefused = errors.New("refused by the wrapper")

type wrapped struct {
	driver.Connector
	n      *int
	refuse *bool
}

func (w wrapped) Connect(ctx context.Context) (driver.Conn, error) {
	*w.n++
	if *w.refuse {
		return nil, errRefused
	}
	return w.Connector.Connect(ctx)
}
