package sim

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// A SIGTERM the gate sends ends one way, whatever the scheduler does, so
// that a seed replays as it ran: at a request, the request takes effect
// before the run is told to stop, and the run never reads its answer; at
// a statement, the statement is not run; at a COMMIT, the transaction
// commits, then the run is told to stop. Each is tried many times: an
// answer racing the ended context would win some of them.
func TestGateEndsASIGTERMOneWay(t *testing.T) {
	const tries = 100
	t.Run("request", func(t *testing.T) {
		g := &gate{}
		var took atomic.Int32
		srv := g.front("slack", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(2 * time.Millisecond) // a Slack that takes its time
			took.Add(1)
			w.Write([]byte("ok"))
		}), func(*http.Request) bool { return true })
		defer srv.Close()
		for i := range tries {
			ctx, cancel := context.WithCancel(context.Background())
			g.reset(&plan{match: isPost, nth: 1, how: "term"}, cancel)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/chat.postMessage", strings.NewReader("{}"))
			res, err := http.DefaultClient.Do(req)
			if err == nil {
				res.Body.Close()
				t.Fatalf("try %d: a post struck by SIGTERM was answered %s, want no answer read", i, res.Status)
			}
			if ctx.Err() == nil {
				t.Fatalf("try %d: the run's context still live after its SIGTERM", i)
			}
			if n := took.Load(); n != int32(i+1) {
				t.Fatalf("try %d: Slack had taken %d posts when the run's post returned, want %d: the effect before the run goes on", i, n, i+1)
			}
			cancel()
		}
		if n := took.Load(); n != tries {
			t.Errorf("Slack took %d of %d posts struck by SIGTERM, want every one", n, tries)
		}
	})
	t.Run("statement_and_commit", func(t *testing.T) {
		target, err := dsn.Parse("sqlite:"+filepath.Join(t.TempDir(), "h.db"), dsn.Options{Mode: dsn.ReadWriteCreate})
		if err != nil {
			t.Fatal(err)
		}
		g := &gate{}
		target.Wrap = g.wrap("history")
		db, err := target.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("CREATE TABLE t (n INTEGER)"); err != nil {
			t.Fatal(err)
		}
		for i := range tries {
			// The statement struck is not run.
			ctx, cancel := context.WithCancel(context.Background())
			g.reset(&plan{match: anyOf("history"), nth: 1, how: "term"}, cancel)
			if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (?)", -i-1); !errors.Is(err, context.Canceled) {
				t.Fatalf("try %d: an insert struck by SIGTERM: %v, want context.Canceled", i, err)
			}
			// The COMMIT struck commits.
			ctx, cancel = context.WithCancel(context.Background())
			g.reset(&plan{match: sqlIs("history", "COMMIT"), nth: 1, how: "term"}, cancel)
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (?)", i); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatalf("try %d: a COMMIT struck by SIGTERM: %v, want it committed", i, err)
			}
			if ctx.Err() == nil {
				t.Fatalf("try %d: the run's context still live after the COMMIT's SIGTERM", i)
			}
			cancel()
		}
		g.reset(nil, nil)
		var kept, dropped int
		if err := db.QueryRow("SELECT COUNT(*) FROM t WHERE n >= 0").Scan(&kept); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("SELECT COUNT(*) FROM t WHERE n < 0").Scan(&dropped); err != nil {
			t.Fatal(err)
		}
		if kept != tries || dropped != 0 {
			t.Errorf("%d of %d commits kept, %d of %d struck inserts run; want all commits, no insert", kept, tries, dropped, tries)
		}
	})
}
