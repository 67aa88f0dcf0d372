package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/pgtest"
)

// The read-only check over the variables' values: any one of them makes
// the target read-only, and the error names each that is on.
func TestMySQLReadOnlyVariables(t *testing.T) {
	for _, tt := range []struct {
		vars map[string]string
		want []string // what the error names; nil: writable
	}{
		{map[string]string{"read_only": "OFF", "innodb_read_only": "OFF", "transaction_read_only": "OFF", "tx_read_only": "OFF"}, nil},
		{map[string]string{}, nil},
		{map[string]string{"read_only": "ON", "innodb_read_only": "OFF"}, []string{"@@read_only is ON"}},
		{map[string]string{"read_only": "ON", "super_read_only": "ON"}, []string{"@@read_only is ON, @@super_read_only is ON"}},
		{map[string]string{"innodb_read_only": "ON"}, []string{"@@innodb_read_only is ON"}},
		{map[string]string{"transaction_read_only": "1"}, []string{"@@transaction_read_only is 1"}},
		{map[string]string{"tx_read_only": "ON"}, []string{"@@tx_read_only is ON"}},
		{map[string]string{"read_only": "NO_LOCK_NO_ADMIN"}, []string{"@@read_only is NO_LOCK_NO_ADMIN"}}, // MariaDB 11's modes
	} {
		err := mysqlReadOnly(tt.vars)
		if tt.want == nil {
			if err != nil {
				t.Errorf("mysqlReadOnly(%v) = %v, want nil", tt.vars, err)
			}
			continue
		}
		if !errors.Is(err, ErrReadOnly) || !errors.Is(err, ErrRefused) {
			t.Errorf("mysqlReadOnly(%v) = %v, want ErrReadOnly and ErrRefused", tt.vars, err)
			continue
		}
		for _, w := range append(tt.want, "STORE_WRITE_DSN", "READ_ONLY ADMIN") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("mysqlReadOnly(%v) = %q, want it to name %q", tt.vars, err, w)
			}
		}
	}
}

// A PostgreSQL hot standby, and a session that is read-only, are named as
// such.
func TestPostgresReadOnlySettings(t *testing.T) {
	for _, tt := range []struct {
		recovery    bool
		tx, def     string
		want        []string
		notWritable bool
	}{
		{false, "off", "off", nil, false},
		{true, "on", "on", []string{"STORE_WRITE_DSN", "hot standby", "pg_is_in_recovery()", "primary"}, true},
		{false, "on", "on", []string{"STORE_WRITE_DSN", "default_transaction_read_only = on"}, true},
		{false, "on", "off", []string{"STORE_WRITE_DSN", "transaction_read_only = on"}, true},
	} {
		err := pgReadOnly(tt.recovery, tt.tx, tt.def)
		if (err != nil) != tt.notWritable || (err != nil && !errors.Is(err, ErrReadOnly)) {
			t.Errorf("pgReadOnly(%v, %s, %s) = %v", tt.recovery, tt.tx, tt.def, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("pgReadOnly(%v, %s, %s) = %q, want it to name %q", tt.recovery, tt.tx, tt.def, err, w)
			}
		}
	}
}

// A PostgreSQL role whose sessions are read-only is refused when the
// writer opens, naming the setting, before anything is written.
func TestPostgresReadOnlySessionRefusedBeforeWriting(t *testing.T) {
	db, base := pgtest.New(t)
	applySchemas(t, db, "postgres")
	raw := withOptions(t, base, "-c default_transaction_read_only=on")
	w, err := OpenWriter(t.Context(), storeWriteDSN(t, raw), "", Options{})
	if err == nil {
		w.Close()
		t.Fatal("OpenWriter on a read-only session succeeded")
	}
	if !errors.Is(err, ErrReadOnly) || !errors.Is(err, ErrRefused) {
		t.Errorf("err = %v, want ErrReadOnly", err)
	}
	errorContains(t, err, "STORE_WRITE_DSN", "default_transaction_read_only = on")
}

func withOptions(t *testing.T, raw, options string) string {
	t.Helper()
	u := mustURL(t, raw)
	q := u.Query()
	q.Set("options", options)
	u.RawQuery = q.Encode()
	return u.String()
}

// A MariaDB server running read_only (a replica) is refused before
// anything is written, even to a role that holds READ_ONLY ADMIN (root
// here), which the server itself would let write. The server is a private
// one, started for the test in a temporary data directory on a free
// loopback port: read_only is never set on a shared server.
func TestMariaDBReadOnlyServerRefusedBeforeWriting(t *testing.T) {
	raw, admin := privateMariaDB(t, "--read-only")
	admin.MustExec("CREATE DATABASE store")
	admin.MustExec(`CREATE TABLE store.clicks (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, ts DATETIME(3) NOT NULL,
  link_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, country_code CHAR(2) NULL, KEY (ts))`)
	var ro string
	if err := admin.Get(&ro, "SELECT @@global.read_only"); err != nil || ro != "1" {
		t.Fatalf("the private server's read_only = %q (%v): the test proves nothing", ro, err)
	}
	w, err := OpenWriter(t.Context(), storeWriteDSN(t, raw+"store"), "", Options{})
	if err == nil {
		hour := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
		got, ierr := w.Insert(t.Context(), nil, []HourWrite{{From: hour, To: hour.Add(time.Hour), Clicks: []Click{{TS: hour, LinkID: "lnk_a"}}}}, nil)
		w.Close()
		t.Fatalf("OpenWriter on a read_only server succeeded, and Insert wrote %d rows (%v)", got.Inserted, ierr)
	}
	if !errors.Is(err, ErrReadOnly) || !errors.Is(err, ErrRefused) {
		t.Errorf("err = %v, want ErrReadOnly", err)
	}
	errorContains(t, err, "STORE_WRITE_DSN", "@@read_only is ON")
	var n int
	if err := admin.Get(&n, "SELECT count(*) FROM store.clicks"); err != nil || n != 0 {
		t.Errorf("the replica holds %d rows (%v), want 0", n, err)
	}
}

// privateMariaDB starts a MariaDB server of the test's own (mariadbd, in a
// temporary data directory, on a free loopback port, with args), stopped
// when t ends, and returns its mysql:// DSN without a database (ending in
// "/") and an admin handle. Without the binaries it skips, or fails when
// CI is set.
func privateMariaDB(t *testing.T, args ...string) (string, *sqlx.DB) {
	t.Helper()
	for _, bin := range []string{"mariadb-install-db", "mariadbd"} {
		if _, err := exec.LookPath(bin); err != nil {
			dbtest.Unavailable(t, "privateMariaDB", "MariaDB", "PATH", bin, err)
			return "", nil
		}
	}
	dir, err := os.MkdirTemp("", "clickrecon-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	install := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, "--user=root",
		"--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		dbtest.Unavailable(t, "privateMariaDB", "MariaDB", "PATH", "mariadb-install-db", fmt.Errorf("%w: %s", err, out))
		return "", nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	server := exec.CommandContext(ctx, "mariadbd", append([]string{"--no-defaults", "--datadir=" + data, "--user=root",
		"--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", port), "--socket=" + filepath.Join(dir, "sock"),
		"--skip-log-bin", "--innodb-buffer-pool-size=16M", "--log-error=" + filepath.Join(dir, "err.log")}, args...)...)
	if err := server.Start(); err != nil {
		cancel()
		dbtest.Unavailable(t, "privateMariaDB", "MariaDB", "PATH", "mariadbd", err)
		return "", nil
	}
	t.Cleanup(func() {
		cancel()
		server.Wait()
	})
	raw := fmt.Sprintf("mysql://root@127.0.0.1:%d/", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		admin, err := sqlx.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/", port))
		if err == nil {
			if err = admin.Ping(); err == nil {
				t.Cleanup(func() { admin.Close() })
				return raw, admin
			}
			admin.Close()
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "err.log"))
			dbtest.Unavailable(t, "privateMariaDB", "MariaDB", "PATH", "127.0.0.1", fmt.Errorf("%w: %s", err, log))
			return "", nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A PostgreSQL hot standby is refused before anything is written, the
// error naming STORE_WRITE_DSN and that it is a standby (before, the
// first write failed with "cannot set transaction read-write mode during
// recovery", which names no setting). The primary and its standby are
// private servers, started for the test as the postgres user.
func TestPostgresHotStandbyRefusedBeforeWriting(t *testing.T) {
	primary, standby := privateStandby(t)
	primary.MustExec(`CREATE TABLE clicks (ts timestamptz NOT NULL, link_id text NOT NULL, country_code text)`)
	raw := "postgres://postgres@127.0.0.1:" + standby + "/postgres?sslmode=disable"
	deadline := time.Now().Add(30 * time.Second)
	for {
		db, err := sqlx.Open("postgres", raw)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = db.Get(&n, "SELECT count(*) FROM pg_class WHERE relname = 'clicks'")
		db.Close()
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not replay the table: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	w, err := OpenWriter(t.Context(), storeWriteDSN(t, raw), "", Options{})
	if err == nil {
		w.Close()
		t.Fatal("OpenWriter on a hot standby succeeded")
	}
	if !errors.Is(err, ErrReadOnly) || !errors.Is(err, ErrRefused) {
		t.Errorf("err = %v, want ErrReadOnly", err)
	}
	errorContains(t, err, "STORE_WRITE_DSN", "hot standby", "pg_is_in_recovery()")
}

// privateStandby starts a PostgreSQL primary and a hot standby streaming
// from it, of the test's own (initdb, pg_basebackup -R, in a temporary
// directory, on free loopback ports, as the postgres user), stopped when t
// ends, and returns a handle on the primary and the standby's port.
func privateStandby(t *testing.T) (*sqlx.DB, string) {
	t.Helper()
	bin := ""
	for _, dir := range []string{"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"} {
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			bin = dir
		}
	}
	u, uerr := user.Lookup("postgres")
	if bin == "" || uerr != nil || os.Geteuid() != 0 {
		dbtest.Unavailable(t, "privateStandby", "PostgreSQL's binaries", "PATH", "/usr/lib/postgresql", fmt.Errorf("initdb in %q, user postgres: %v, running as root: %v", bin, uerr, os.Geteuid() == 0))
		return nil, ""
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "clickrecon-standby-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	as := func(ctx context.Context, name string, args ...string) *exec.Cmd {
		c := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		c.Dir = dir
		c.Env = []string{"PATH=/usr/bin:/bin", "LANG=C"}
		return c
	}
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := as(context.Background(), name, args...).CombinedOutput(); err != nil {
			dbtest.Unavailable(t, "privateStandby", "PostgreSQL", "PATH", name, fmt.Errorf("%w: %s", err, out))
		}
	}
	start := func(data string) string {
		t.Helper()
		port := freePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		srv := as(ctx, "postgres", "-D", data, "-p", port, "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "shared_buffers=16MB")
		srv.Cancel = func() error { return srv.Process.Signal(syscall.SIGINT) } // a fast shutdown
		if err := srv.Start(); err != nil {
			cancel()
			dbtest.Unavailable(t, "privateStandby", "PostgreSQL", "PATH", "postgres", err)
		}
		t.Cleanup(func() { cancel(); srv.Wait() })
		return port
	}
	connect := func(port string) *sqlx.DB {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			db, err := sqlx.Open("postgres", "postgres://postgres@127.0.0.1:"+port+"/postgres?sslmode=disable")
			if err == nil {
				if err = db.Ping(); err == nil {
					return db
				}
				db.Close()
			}
			if time.Now().After(deadline) {
				dbtest.Unavailable(t, "privateStandby", "PostgreSQL", "PATH", "127.0.0.1:"+port, err)
				return nil
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	run("initdb", "-D", filepath.Join(dir, "primary"), "-U", "postgres", "--auth=trust", "--no-sync")
	primaryPort := start(filepath.Join(dir, "primary"))
	primary := connect(primaryPort)
	t.Cleanup(func() { primary.Close() })
	run("pg_basebackup", "-D", filepath.Join(dir, "standby"), "-R", "-h", "127.0.0.1", "-p", primaryPort, "-U", "postgres", "--no-sync")
	standbyPort := start(filepath.Join(dir, "standby"))
	connect(standbyPort).Close()
	return primary, standbyPort
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
