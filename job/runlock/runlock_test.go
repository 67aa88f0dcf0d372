package runlock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/pgtest"
)

// uniqueWorkspace returns a workspace id no other test, and no other test
// run against the same server, locks: advisory locks are database-wide,
// not per schema.
func uniqueWorkspace(t *testing.T, name string) string {
	return fmt.Sprintf("%s-%s-%016x", t.Name(), name, rand.Uint64())
}

func TestOn(t *testing.T) {
	const (
		pg     = "postgres://u@db/history"
		pgql   = "postgresql://u@db/clicks"
		liteH  = "sqlite:/var/lib/clickrecon/history.db"
		liteSt = "sqlite:/data/clicks.db"
	)
	tests := []struct {
		name, history, store, want string
	}{
		{"postgres_history", pg, liteSt, pg},
		{"postgres_store_beats_sqlite_history", liteH, pgql, pgql},
		{"both_postgres_history_first", pg, pgql, pg},
		{"embedded_history", liteH, liteSt, liteH},
		{"embedded_store_without_history", "", liteSt, liteSt},
		{"postgres_store_without_history", "", pgql, pgql},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := On(target(t, tt.history), target(t, tt.store)); got.Conn != target(t, tt.want).Conn {
				t.Errorf("On(%q, %q) = %s, want %s", tt.history, tt.store, got, tt.want)
			}
		})
	}
}

// target reads rawDSN as the DSNs a lock may be taken on are read: a
// SQLite file need not exist yet. "" is no DSN, the zero Target.
func target(t *testing.T, rawDSN string) dsn.Target {
	t.Helper()
	if rawDSN == "" {
		return dsn.Target{}
	}
	tg, err := dsn.Parse(rawDSN, dsn.Options{Mode: dsn.ReadWriteCreate, MySQL: true})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestKeyIsStable(t *testing.T) {
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
		if got := Key(tt.workspace); got != tt.want {
			t.Errorf("Key(%q) = %d, want %d", tt.workspace, got, tt.want)
		}
	}
	if Key("1") == Key("2") {
		t.Error("two workspaces share a key")
	}
}

// setups are the two kinds of lock, each with a DSN of its own.
func setups(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"postgres": func(t *testing.T) string { _, dsn := pgtest.New(t); return dsn },
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "history.db") },
	}
}

func TestTakeExcludesASecondRunOfTheSameWorkspace(t *testing.T) {
	for name, newDSN := range setups(t) {
		t.Run(name, func(t *testing.T) {
			dsn := target(t, newDSN(t))
			ctx := context.Background()
			ws := uniqueWorkspace(t, "a")

			// Two runs start at once: exactly one gets the lock.
			var (
				wg    sync.WaitGroup
				locks [2]*Lock
				errs  [2]error
			)
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					locks[i], errs[i] = Take(ctx, dsn, ws)
				}()
			}
			wg.Wait()
			var held *Lock
			refused := 0
			for i := range 2 {
				switch {
				case errs[i] == nil:
					held = locks[i]
				case errors.Is(errs[i], ErrLocked):
					refused++
					if !strings.Contains(errs[i].Error(), ws) {
						t.Errorf("error %q does not name the workspace %s", errs[i], ws)
					}
				default:
					t.Fatalf("Take %d: %v", i, errs[i])
				}
			}
			if held == nil || refused != 1 {
				t.Fatalf("of two concurrent Takes, %d were refused; want exactly one lock and one ErrLocked (%v)", refused, errs)
			}
			if err := held.Held(ctx); err != nil {
				t.Errorf("Held while held: %v", err)
			}

			other, err := Take(ctx, dsn, uniqueWorkspace(t, "b"))
			if err != nil {
				t.Fatalf("Take of another workspace while the first is held: %v", err)
			}
			if err := other.Release(); err != nil {
				t.Errorf("release of the other workspace: %v", err)
			}

			if err := held.Release(); err != nil {
				t.Fatalf("Release: %v", err)
			}
			if err := held.Release(); err != nil {
				t.Errorf("second Release: %v, want nil", err)
			}
			if err := held.Held(ctx); !errors.Is(err, ErrLost) {
				t.Errorf("Held after Release: %v, want ErrLost", err)
			}
			again, err := Take(ctx, dsn, ws)
			if err != nil {
				t.Fatalf("Take after Release: %v", err)
			}
			if err := again.Release(); err != nil {
				t.Errorf("Release: %v", err)
			}
		})
	}
}

// The lock's session is terminated under a live run (a failover,
// pg_terminate_backend): Held says so before anything is posted, and a
// second run can take the lock.
func TestAdvisoryHeldDetectsATerminatedSession(t *testing.T) {
	admin, dsn := pgtest.New(t)
	ctx := context.Background()
	ws := uniqueWorkspace(t, "a")

	l, err := Take(ctx, target(t, dsn), ws)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	if err := l.Held(ctx); err != nil {
		t.Fatalf("Held before the session was terminated: %v", err)
	}
	if _, err := Take(ctx, target(t, dsn), ws); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Take while held: %v, want ErrLocked", err)
	}

	// Find the session that holds the lock, as an operator would, and
	// terminate it, waiting (at most 5s) until it is gone.
	key := uint64(Key(ws))
	var pid int
	err = admin.QueryRowContext(ctx, `
		SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted
		  AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 1
		  AND a.application_name = $3`,
		key>>32, key&0xffffffff, applicationName).Scan(&pid)
	if err != nil {
		t.Fatalf("find the session holding the lock in pg_locks: %v", err)
	}
	var killed bool
	if err := admin.QueryRowContext(ctx, "SELECT pg_terminate_backend($1, 5000)", pid).Scan(&killed); err != nil || !killed {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, killed, err)
	}

	if err := l.Held(ctx); !errors.Is(err, ErrLost) {
		t.Errorf("Held after the session was terminated: %v, want ErrLost", err)
	}
	second, err := Take(ctx, target(t, dsn), ws)
	if err != nil {
		t.Fatalf("Take after the holder's session ended: %v", err)
	}
	if err := second.Held(ctx); err != nil {
		t.Errorf("Held of the second run: %v", err)
	}
	if err := l.Held(ctx); !errors.Is(err, ErrLost) {
		t.Errorf("Held of the first run while the second holds the lock: %v, want ErrLost", err)
	}
	// The dead holder's release reports that it had lost the lock, and
	// returns rather than hanging; it does not free the second run's.
	if err := l.Release(); err == nil {
		t.Error("Release on a terminated session: got nil, want an error")
	}
	if err := second.Held(ctx); err != nil {
		t.Errorf("Held of the second run after the first released: %v", err)
	}
	if err := second.Release(); err != nil {
		t.Errorf("Release: %v", err)
	}
}

func TestAdvisoryErrorsHideThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Nothing listens on port 1: the connection is refused at once.
	dsn := "postgres://recon:s3cret-pw@127.0.0.1:1/clicks?sslmode=disable&connect_timeout=2"
	_, err := Take(ctx, target(t, dsn), "48213")
	if err == nil {
		t.Fatal("Take on a closed port: got nil error")
	}
	if errors.Is(err, ErrLocked) {
		t.Errorf("Take on a closed port: %v, must not be ErrLocked", err)
	}
	if strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("error shows the password: %v", err)
	}
	if !strings.Contains(err.Error(), "48213") {
		t.Errorf("error %q does not name the workspace", err)
	}
	if _, err := Take(ctx, target(t, "mysql://u:p@host/db"), "48213"); err == nil || errors.Is(err, ErrLocked) {
		t.Errorf("Take with an unsupported DSN: %v, want a DSN error", err)
	}
}

// Two spellings of one SQLite file (relative, through a symbolic link)
// share one lock; a history still to be created can be locked.
func TestFileLockFollowsTheFileNotItsSpelling(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db") // not created: migrate has yet to run
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	ws := uniqueWorkspace(t, "a")
	l, err := Take(ctx, target(t, "sqlite:"+db), ws)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	for _, spelling := range []string{"sqlite://" + db, "sqlite:" + filepath.Join(link, "history.db"), "SQLITE:" + db} {
		if _, err := Take(ctx, target(t, spelling), ws); !errors.Is(err, ErrLocked) {
			t.Errorf("Take(%s) while %s is locked: %v, want ErrLocked", spelling, db, err)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("Take created the SQLite file")
	}
	if !strings.Contains(l.String(), dir) {
		t.Errorf("String() = %q, want the lock file beside %s", l.String(), db)
	}
}

// A lock file removed under a run (an operator cleaning up) lets another
// run lock a new file: Held says the lock is lost.
func TestFileLockHeldDetectsARemovedFile(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "history.db")
	ws := uniqueWorkspace(t, "a")
	l, err := Take(ctx, target(t, "sqlite:"+db), ws)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	path := strings.TrimPrefix(l.String(), "lock file ")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := l.Held(ctx); !errors.Is(err, ErrLost) {
		t.Errorf("Held after the lock file was removed: %v, want ErrLost", err)
	}
	second, err := Take(ctx, target(t, "sqlite:"+db), ws)
	if err != nil {
		t.Fatalf("Take after the lock file was removed: %v", err)
	}
	if err := second.Release(); err != nil {
		t.Error(err)
	}
}

// When the folder of the file cannot take the lock file (a read-only
// volume; here, a folder squatting the lock file's name), the lock goes in
// the temporary folder and still excludes a second run.
func TestFileLockFallsBackToTheTemporaryFolder(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "clicks.db")
	ws := uniqueWorkspace(t, "a")
	if err := os.Mkdir(db+fmt.Sprintf(".lock-%016x", uint64(Key(ws))), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := Take(ctx, target(t, "sqlite:"+db), ws)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	path := strings.TrimPrefix(l.String(), "lock file ")
	t.Cleanup(func() { os.Remove(path) })
	defer l.Release()
	if filepath.Dir(path) != filepath.Clean(os.TempDir()) {
		t.Errorf("lock file %s, want it in %s", path, os.TempDir())
	}
	if _, err := Take(ctx, target(t, "sqlite:"+db), ws); !errors.Is(err, ErrLocked) {
		t.Errorf("second Take: %v, want ErrLocked", err)
	}
}

// helperEnv names the lock file a re-executed test binary locks.
const (
	helperDB = "CLICKRECON_RUNLOCK_HELPER_DB"
	helperWS = "CLICKRECON_RUNLOCK_HELPER_WS"
)

// TestHelperProcess is not a test: it is the second run of
// TestFileLockAcrossProcesses, started as a copy of the test binary. It
// takes the lock, says "locked" and holds it until its stdin closes or it
// is killed; refused, it exits 3, as clickrecon does.
func TestHelperProcess(t *testing.T) {
	db := os.Getenv(helperDB)
	if db == "" {
		t.Skip("only run by TestFileLockAcrossProcesses")
	}
	l, err := Take(context.Background(), target(t, "sqlite:"+db), os.Getenv(helperWS))
	if errors.Is(err, ErrLocked) {
		os.Exit(3)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n')
	l.Release()
	os.Exit(0)
}

// helper starts a process that takes the lock of ws on db, killed if it
// still runs after 30s.
func helper(t *testing.T, db, ws string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperDB+"="+db, helperWS+"="+ws)
	cmd.Stderr = os.Stderr
	return cmd
}

// Two processes of the embedded setup: the second is refused while the
// first holds the lock, and the kernel releases a crashed holder's lock.
func TestFileLockAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "history.db")
	ws := uniqueWorkspace(t, "a")

	holder := helper(t, db, ws)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	said := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		said <- line
	}()
	select {
	case line := <-said:
		if line != "locked\n" {
			holder.Process.Kill()
			holder.Wait()
			t.Fatalf("the holder process said %q, want locked", line)
		}
	case <-time.After(30 * time.Second):
		holder.Process.Kill()
		holder.Wait()
		t.Fatal("the holder process did not take the lock within 30s")
	}

	if _, err := Take(ctx, target(t, "sqlite:"+db), ws); !errors.Is(err, ErrLocked) {
		t.Errorf("Take in this process while another holds the lock: %v, want ErrLocked", err)
	}
	err = helper(t, db, ws).Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("a second process while the first holds the lock: %v, want exit status 3", err)
	}

	// The holder crashes: its lock goes with it.
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	holder.Wait()
	l, err := Take(ctx, target(t, "sqlite:"+db), ws)
	if err != nil {
		t.Fatalf("Take after the holder was killed: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Error(err)
	}
}
