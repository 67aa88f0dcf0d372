package dsn

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

func TestParsePostgres(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want Target
	}{
		{
			name: "connect_timeout_added",
			raw:  "postgres://app:s3cr3t@db.internal:5432/clicks?sslmode=require",
			want: Target{Dialect: Postgres, Redacted: "postgres://app:xxxxx@db.internal:5432/clicks?sslmode=require", Conn: "postgres://app:s3cr3t@db.internal:5432/clicks?connect_timeout=10&sslmode=require",
				Secrets: []string{"s3cr3t", "s3cr3t", "s3cr3t", "s3cr3t"}},
		},
		{
			name: "own_connect_timeout_kept",
			raw:  "postgresql://app@db/clicks?connect_timeout=3",
			want: Target{Dialect: Postgres, Redacted: "postgresql://app@db/clicks?connect_timeout=3", Conn: "postgresql://app@db/clicks?connect_timeout=3"},
		},
		{
			// An @ in a query value (Azure's user@server form) is no
			// misread user:password part.
			name: "at_in_a_query_value",
			raw:  "postgres://db:5432/clicks?user=recon@myserver&application_name=job@cron",
			want: Target{Dialect: Postgres, Redacted: "postgres://db:5432/clicks?user=recon@myserver&application_name=job@cron", Conn: "postgres://db:5432/clicks?application_name=job%40cron&connect_timeout=10&user=recon%40myserver"},
		},
		{
			name: "scheme_in_capitals",
			raw:  "POSTGRES://app@db/clicks",
			want: Target{Dialect: Postgres, Redacted: "postgres://app@db/clicks", Conn: "postgres://app@db/clicks?connect_timeout=10"},
		},
		{
			// The password is scrubbed decoded, encoded both ways, and as
			// written (lower-case hex, here).
			name: "percent_encoded_password",
			raw:  "postgres://app:p%40ss%2fw0rd@db/clicks",
			want: Target{Dialect: Postgres, Redacted: "postgres://app:xxxxx@db/clicks", Conn: "postgres://app:p%40ss%2Fw0rd@db/clicks?connect_timeout=10",
				Secrets: []string{"p@ss/w0rd", "p%40ss%2Fw0rd", "p@ss%2Fw0rd", "p%40ss%2fw0rd"}},
		},
		{
			name: "password_in_query",
			raw:  "postgres://app@db/clicks?password=s3cr%23t&connect_timeout=5",
			want: Target{Dialect: Postgres, Redacted: "postgres://app@db/clicks?connect_timeout=5&password=xxxxx", Conn: "postgres://app@db/clicks?password=s3cr%23t&connect_timeout=5",
				Secrets: []string{"s3cr#t", "s3cr%23t"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.raw, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
}

// A Target is shown by its redacted DSN, however it is printed: never
// with the password its Conn holds.
func TestTargetPrintsRedacted(t *testing.T) {
	got, err := Parse("mysql://recon:s3cr3t@db:3306/clicks", Options{MySQL: true})
	if err != nil {
		t.Fatal(err)
	}
	const want = "mysql://recon:xxxxx@db:3306/clicks"
	for _, s := range []string{got.Redacted, got.String(), fmt.Sprint(got), fmt.Sprintf("%v", got)} {
		if s != want {
			t.Errorf("printed %q, want %q", s, want)
		}
	}
	if got.IsZero() || !(Target{}).IsZero() {
		t.Errorf("IsZero: parsed %v, zero %v", got.IsZero(), (Target{}).IsZero())
	}
}

func TestParseSQLite(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "clicks.db")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A '?' in the file name must not reach SQLite as URI parameters (it
	// would turn mode=ro into mode=rw).
	reserved := filepath.Join(dir, "my clicks #1?mode=rw%20.db")
	if err := os.WriteFile(reserved, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const (
		readOnly  = "?_pragma=query_only%281%29&_pragma=busy_timeout%2810000%29&mode=ro"
		readWrite = "?_pragma=busy_timeout%2810000%29&_pragma=foreign_keys%281%29&_txlock=immediate&mode=rw"
	)
	tests := []struct {
		name string
		raw  string
		mode Mode
		want string // Conn
	}{
		{"read_only", "sqlite:" + existing, ReadOnly, "file://" + existing + readOnly},
		{"url_style_path", "sqlite://" + existing, ReadOnly, "file://" + existing + readOnly},
		{"scheme_in_capitals", "SQLITE:" + existing, ReadOnly, "file://" + existing + readOnly},
		{"reserved_characters_in_the_path", "sqlite:" + reserved, ReadOnly,
			"file://" + filepath.Join(dir, "my%20clicks%20%231%3Fmode=rw%2520.db") + readOnly},
		{"read_write", "sqlite:" + existing, ReadWrite, "file://" + existing + readWrite},
		{"create_a_missing_file", "sqlite:" + filepath.Join(dir, "new.db"), ReadWriteCreate,
			"file://" + filepath.Join(dir, "new.db") + strings.Replace(readWrite, "mode=rw", "mode=rwc", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.raw, Options{Mode: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			// A SQLite DSN has no password: its redacted form is
			// Redact's, tested with it.
			if diff := cmp.Diff(Target{Dialect: SQLite, Conn: tt.want}, got, cmpopts.IgnoreFields(Target{}, "Redacted")); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "new.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Parse created the SQLite file (stat: %v)", err)
	}
}

func TestParseErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	notADatabase := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notADatabase, []byte("these are not the clicks you are looking for\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		raw     string
		opts    Options
		want    []string // substrings of the error
		secrets []string // must not appear in the error
		// notExist: the error is fs.ErrNotExist, a SQLite file missing
		notExist bool
	}{
		{
			name:    "unknown_sslmode",
			raw:     "postgres://app:s3cr3t-pw@127.0.0.1/clicks?sslmode=sometimes",
			opts:    Options{Name: "STORE_DSN"},
			want:    []string{"invalid PostgreSQL STORE_DSN", "sslmode", "sometimes", "verify-full"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name:    "port_out_of_range",
			raw:     "postgres://app:s3cr3t-pw@127.0.0.1:99999/clicks?sslmode=disable",
			opts:    Options{Name: "STORE_DSN"},
			want:    []string{"invalid PostgreSQL STORE_DSN", "port 99999", "1 to 65535"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name:    "port_zero",
			raw:     "postgres://app:s3cr3t-pw@127.0.0.1:0/clicks?sslmode=disable",
			want:    []string{"port 0", "1 to 65535"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name:    "port_in_the_query",
			raw:     "postgres://app:s3cr3t-pw@127.0.0.1/clicks?port=70000",
			want:    []string{"invalid PostgreSQL DSN", "port"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name:    "port_not_a_number",
			raw:     "postgres://app:s3cr3t-pw@127.0.0.1:54x2/clicks",
			want:    []string{"malformed PostgreSQL DSN"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name: "sqlite_not_a_database",
			raw:  "sqlite:" + notADatabase,
			opts: Options{Name: "STORE_DSN"},
			want: []string{notADatabase, "is not a SQLite database"},
		},
		{
			name: "sqlite_not_a_database_read_write",
			raw:  "sqlite:" + notADatabase,
			opts: Options{Mode: ReadWrite},
			want: []string{"is not a SQLite database"},
		},
		{
			name:    "unsupported_scheme",
			raw:     "sqlserver://app:s3cr3t-pw@db/clicks",
			want:    []string{`unsupported DSN scheme "sqlserver"`, "postgres://", "postgresql://", "sqlite:PATH", "mysql://"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name: "unsupported_scheme_named",
			raw:  "sqlserver://x",
			opts: Options{Name: "HISTORY_DSN"},
			want: []string{`unsupported HISTORY_DSN scheme "sqlserver"`, "sqlite:PATH"},
		},
		{
			name:    "key_value_dsn",
			raw:     "host=db user=app password=s3cr3t-pw",
			opts:    Options{Name: "HISTORY_DSN"},
			want:    []string{"unsupported HISTORY_DSN: use", "postgres://", "sqlite:PATH"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name:    "not_a_dsn_at_all",
			raw:     "s3cr3t-pw",
			want:    []string{"unsupported DSN: use", "postgres://", "sqlite:PATH"},
			secrets: []string{"s3cr3t-pw"},
		},
		{
			name:    "malformed_url",
			raw:     "postgres://app:s3cr#3t-pw@127.0.0.1/clicks",
			want:    []string{"malformed PostgreSQL DSN", "percent-encoded"},
			secrets: []string{"s3cr", "3t-pw"},
		},
		{
			// Parses as a URL whose host is "app:1234": the password would
			// be shown as a host name.
			name:    "password_misread_as_host",
			raw:     "postgres://app:1234#Abc@127.0.0.1:5432/clicks",
			opts:    Options{Name: "STORE_DSN"},
			want:    []string{"malformed PostgreSQL STORE_DSN", "percent-encode", "%23"},
			secrets: []string{"1234", "Abc"},
		},
		{
			name:    "at_then_hash_in_password",
			raw:     "postgres://recon:p@ss#1@127.0.0.1:5432/clicks",
			opts:    Options{Name: "STORE_DSN"},
			want:    []string{"malformed PostgreSQL STORE_DSN", "percent-encode"},
			secrets: []string{"ss#1"},
		},
		{
			name:    "malformed_url_named",
			raw:     "postgres://app:s3cr#3t-pw@127.0.0.1/clicks",
			opts:    Options{Name: "HISTORY_DSN"},
			want:    []string{"malformed PostgreSQL HISTORY_DSN", "percent-encoded"},
			secrets: []string{"s3cr", "3t-pw"},
		},
		{
			name: "sqlite_without_path",
			raw:  "sqlite:",
			opts: Options{Name: "HISTORY_DSN"},
			want: []string{"sqlite HISTORY_DSN names no file"},
		},
		{
			name:     "sqlite_missing_file",
			raw:      "sqlite:" + missing,
			want:     []string{"sqlite file " + missing + " does not exist (check the path)"},
			notExist: true,
		},
		{
			name:     "sqlite_missing_file_with_hint",
			raw:      "sqlite:" + missing,
			opts:     Options{Mode: ReadWrite, MissingHint: "run clickrecon migrate to create it"},
			want:     []string{missing, "does not exist (run clickrecon migrate to create it)"},
			notExist: true,
		},
		{
			name: "sqlite_directory",
			raw:  "sqlite:" + dir,
			opts: Options{Mode: ReadWrite},
			want: []string{"is a directory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.raw, tt.opts)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, s := range tt.secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q shows the secret %q", err, s)
				}
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tt.notExist {
				t.Errorf("errors.Is(%q, fs.ErrNotExist) = %v, want %v", err, got, tt.notExist)
			}
		})
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Parse created the SQLite file (stat: %v)", err)
	}
}

// TestOpenSQLite checks the modes against SQLite itself: ReadWriteCreate
// creates the file, ReadOnly refuses writes.
func TestOpenSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	open := func(mode Mode) *sqlx.DB {
		t.Helper()
		tg, err := Parse("sqlite:"+path, Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		db, err := tg.Open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if got := db.DriverName(); got != "sqlite" {
			t.Errorf("driver name %q, want sqlite", got)
		}
		return db
	}
	if _, err := open(ReadWriteCreate).Exec("CREATE TABLE t (x INTEGER)"); err != nil {
		t.Fatalf("create a table in a new file: %v", err)
	}
	if _, err := open(ReadWrite).Exec("INSERT INTO t VALUES (1)"); err != nil {
		t.Fatalf("write in read-write mode: %v", err)
	}
	ro := open(ReadOnly)
	if _, err := ro.Exec("INSERT INTO t VALUES (2)"); err == nil {
		t.Error("write in read-only mode succeeded")
	}
	var n int
	if err := ro.Get(&n, "SELECT count(*) FROM t"); err != nil || n != 1 {
		t.Errorf("read in read-only mode: %d rows, %v; want 1", n, err)
	}
}

func TestWithDefaultParam(t *testing.T) {
	tests := []struct {
		name string
		conn string
		want string
	}{
		{"added", "postgres://app@db/clicks?connect_timeout=10", "postgres://app@db/clicks?application_name=clickrecon-lock&connect_timeout=10"},
		{"kept", "postgres://app@db/clicks?application_name=mine", "postgres://app@db/clicks?application_name=mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := WithDefaultParam(tt.conn, "application_name", "clickrecon-lock")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("WithDefaultParam(%q) (-want +got):\n%s", tt.conn, diff)
			}
		})
	}
	if _, err := WithDefaultParam("postgres://app:s3cr#3t@db/clicks", "application_name", "x"); err == nil || strings.Contains(err.Error(), "s3cr") {
		t.Errorf("WithDefaultParam of a malformed URL: %v, want an error without the password", err)
	}
}

func TestRefused(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&pq.Error{Code: "28P01"}, true}, // invalid password
		{&pq.Error{Code: "28000"}, true}, // invalid authorization
		{&pq.Error{Code: "3D000"}, true}, // no such database
		{&pq.Error{Code: "08006"}, false},
		{&pq.Error{Code: "53300"}, false},
		{fmt.Errorf("open history: %w", &pq.Error{Code: "3D000"}), true},
		{errors.New("dial tcp: connection refused"), false},
		{fmt.Errorf("connect: %w", pq.ErrSSLNotSupported), true}, // sslmode=require on a server without SSL
	} {
		if got := Refused(tt.err); got != tt.want {
			t.Errorf("Refused(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
	// SQLite cannot open a file in a folder that does not exist.
	tg, err := Parse("sqlite:"+filepath.Join(t.TempDir(), "no", "such", "h.db"), Options{Mode: ReadWriteCreate})
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(); !Refused(err) {
		t.Errorf("Refused(%v) = false for a file in a missing folder", err)
	}
	// A file that became something other than a database after Parse.
	path := filepath.Join(t.TempDir(), "clicks.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tg, err = Parse("sqlite:"+path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	notADB, err := tg.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer notADB.Close()
	var n int
	if err := notADB.Get(&n, "SELECT count(*) FROM sqlite_schema"); !Refused(err) {
		t.Errorf("Refused(%v) = false for a file that is not a database", err)
	}
}
