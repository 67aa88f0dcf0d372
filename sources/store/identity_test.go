package store

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/internal/pgtest"
)

// identity opens the store at rawDSN and returns its Identity.
func identity(t *testing.T, rawDSN string) string {
	t.Helper()
	ctx := context.Background()
	st := storeDSN(t, rawDSN)
	s, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatalf("Open(%s): %v", st, err)
	}
	defer s.Close()
	id, err := s.Identity(ctx)
	if err != nil {
		t.Fatalf("Identity of %s: %v", st, err)
	}
	return id
}

// respell returns rawDSN with fn applied to its URL.
func respell(t *testing.T, rawDSN string, fn func(u *url.URL)) string {
	t.Helper()
	u, err := url.Parse(rawDSN)
	if err != nil {
		t.Fatal(err)
	}
	fn(u)
	return u.String()
}

func TestIdentityPostgresIsTheStoreNotItsSpelling(t *testing.T) {
	_, base := pgtest.New(t)
	want := identity(t, base)
	if !regexp.MustCompile(`^postgres:cluster=[0-9]+;db=[0-9]+$`).MatchString(want) {
		t.Fatalf("Identity = %q, want postgres:cluster=SYSID;db=OID", want)
	}

	spellings := map[string]string{
		"postgresql_scheme": respell(t, base, func(u *url.URL) { u.Scheme = "postgresql" }),
		"extra_parameters": respell(t, base, func(u *url.URL) {
			q := u.Query()
			q.Set("application_name", "clickrecon-nightly")
			q.Set("connect_timeout", "7")
			u.RawQuery = q.Encode()
		}),
	}
	if u, _ := url.Parse(base); u.Hostname() == "127.0.0.1" {
		spellings["localhost"] = respell(t, base, func(u *url.URL) { u.Host = "localhost:" + u.Port() })
	}
	if _, err := os.Stat("/var/run/postgresql"); err == nil {
		// The same cluster through its Unix socket, as a sidecar would.
		spellings["unix_socket"] = respell(t, base, func(u *url.URL) {
			u.Host = ""
			q := u.Query()
			q.Set("host", "/var/run/postgresql")
			q.Set("port", "5432")
			u.RawQuery = q.Encode()
		})
	}
	for name, dsn := range spellings {
		t.Run(name, func(t *testing.T) {
			if got := identity(t, dsn); got != want {
				t.Errorf("Identity of %s = %q, want %q as for %s", storeDSN(t, dsn), got, want, storeDSN(t, base))
			}
		})
	}

	t.Run("another_database", func(t *testing.T) {
		other := respell(t, base, func(u *url.URL) { u.Path = "/postgres" })
		got := identity(t, other)
		if got == want {
			t.Errorf("Identity of the database postgres = %q, the same as the test database's", got)
		}
		if cluster := strings.Split(want, ";")[0]; !strings.HasPrefix(got, cluster+";") {
			t.Errorf("Identity of another database of the cluster = %q, want the cluster %s", got, cluster)
		}
	})
}

// Without the privilege to read pg_control_system(), the store is the
// server's address and port: the same for DSNs that differ in scheme and
// parameters.
func TestIdentityPostgresServerFallback(t *testing.T) {
	_, base := pgtest.New(t)
	ctx := context.Background()
	var ids []string
	for _, dsn := range []string{base, respell(t, base, func(u *url.URL) {
		u.Scheme = "postgresql"
		u.RawQuery += "&application_name=x"
	})} {
		s, err := Open(ctx, storeDSN(t, dsn), Options{})
		if err != nil {
			t.Fatal(err)
		}
		id, err := serverIdentity(ctx, s.db)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if ids[0] != ids[1] {
		t.Errorf("server identities %q and %q differ", ids[0], ids[1])
	}
	if !regexp.MustCompile(`^[0-9a-f.:]+:[0-9]+$`).MatchString(ids[0]) {
		t.Errorf("server identity %q, want ADDR:PORT", ids[0])
	}
}

func TestIdentitySQLiteIsTheResolvedFile(t *testing.T) {
	_, dsn := newSQLite(t)
	path := strings.TrimPrefix(dsn, "sqlite:")
	want := identity(t, dsn)
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	if want != "sqlite:"+resolved {
		t.Fatalf("Identity = %q, want sqlite:%s", want, resolved)
	}

	link := filepath.Join(t.TempDir(), "clicks-link.db")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, spelling := range []string{"sqlite://" + path, "sqlite:" + link, "sqlite:" + rel,
		"sqlite:" + filepath.Join(filepath.Dir(path), ".", "x", "..", "clicks.db")} {
		if got := identity(t, spelling); got != want {
			t.Errorf("Identity of %s = %q, want %q", spelling, got, want)
		}
	}

	_, other := newSQLite(t)
	if got := identity(t, other); got == want {
		t.Errorf("Identity of another file = %q, the same as %s's", got, path)
	}
}
