package dsn

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestParseMySQL(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		net      string
		addr     string
		user     string
		passwd   string
		db       string
		tls      string
		timeout  time.Duration
		cleartxt bool
	}{
		{name: "default_port", raw: "mysql://recon:s3cr3t@db.internal/clicks", net: "tcp", addr: "db.internal:3306", user: "recon", passwd: "s3cr3t", db: "clicks", timeout: 10 * time.Second},
		{name: "mariadb_scheme_and_tls", raw: "mariadb://recon:s3cr3t@db:3307/clicks?tls=true&timeout=3s", net: "tcp", addr: "db:3307", user: "recon", passwd: "s3cr3t", db: "clicks", tls: "true", timeout: 3 * time.Second},
		{name: "encoded_password", raw: "mysql://recon:p%40ss%2Fw%3Ard@127.0.0.1:3306/clicks", net: "tcp", addr: "127.0.0.1:3306", user: "recon", passwd: "p@ss/w:rd", db: "clicks", timeout: 10 * time.Second},
		{name: "ipv6", raw: "mysql://recon@[::1]:3306/clicks", net: "tcp", addr: "[::1]:3306", user: "recon", db: "clicks", timeout: 10 * time.Second},
		{name: "socket", raw: "mysql://recon@localhost/clicks?socket=/run/mysqld/mysqld.sock", net: "unix", addr: "/run/mysqld/mysqld.sock", user: "recon", db: "clicks", timeout: 10 * time.Second},
		{name: "cleartext_over_tls", raw: "mysql://recon:pw@db/clicks?tls=true&allowCleartextPasswords=true", net: "tcp", addr: "db:3306", user: "recon", passwd: "pw", db: "clicks", tls: "true", timeout: 10 * time.Second, cleartxt: true},
		{name: "widening_params_off", raw: "mysql://recon@db/clicks?multiStatements=false&allowAllFiles=0&interpolateParams=false", net: "tcp", addr: "db:3306", user: "recon", db: "clicks", timeout: 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.raw, Options{Name: "STORE_DSN", MySQL: true})
			if err != nil {
				t.Fatal(err)
			}
			c := got.MySQLConfig
			if got.Dialect != MySQL || c == nil {
				t.Fatalf("dialect %v, config %v", got.Dialect, c)
			}
			if c.Net != tt.net || c.Addr != tt.addr || c.User != tt.user || c.Passwd != tt.passwd || c.DBName != tt.db ||
				c.TLSConfig != tt.tls || c.Timeout != tt.timeout || c.AllowCleartextPasswords != tt.cleartxt {
				t.Errorf("config = net %q addr %q user %q passwd %q db %q tls %q timeout %v cleartext %v", c.Net, c.Addr, c.User, c.Passwd, c.DBName, c.TLSConfig, c.Timeout, c.AllowCleartextPasswords)
			}
			if c.MultiStatements || c.AllowAllFiles || c.InterpolateParams {
				t.Error("a widening parameter is on")
			}
			// The driver reads Conn back to the same configuration.
			back, err := mysql.ParseDSN(got.Conn)
			if err != nil {
				t.Fatal(err)
			}
			if back.Passwd != tt.passwd || back.Addr != tt.addr || back.DBName != tt.db {
				t.Errorf("Conn %q reads back as passwd %q addr %q db %q", got.Conn, back.Passwd, back.Addr, back.DBName)
			}
		})
	}
}

func TestParseMySQLRefuses(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want []string
	}{
		{"multi_statements", "mysql://recon:s3cr3t@db/clicks?multiStatements=true", []string{"STORE_DSN", "multiStatements=true is refused"}},
		{"all_files", "mysql://recon:s3cr3t@db/clicks?allowAllFiles=1", []string{"allowAllFiles=true is refused", "LOAD DATA LOCAL INFILE"}},
		{"interpolate", "mysql://recon:s3cr3t@db/clicks?interpolateParams=true", []string{"interpolateParams=true is refused"}},
		{"cleartext_without_tls", "mysql://recon:s3cr3t@db/clicks?allowCleartextPasswords=true", []string{"allowCleartextPasswords=true", "tls=true"}},
		{"cleartext_with_preferred_tls", "mysql://recon:s3cr3t@db/clicks?allowCleartextPasswords=true&tls=preferred", []string{"allowCleartextPasswords=true"}},
		{"cleartext_with_fallback", "mysql://recon:s3cr3t@db/clicks?allowCleartextPasswords=true&tls=true&allowFallbackToPlaintext=true", []string{"allowCleartextPasswords=true"}},
		{"session_variable", "mysql://recon:s3cr3t@db/clicks?time_zone=%27%2B02:00%27", []string{`unsupported parameter "time_zone"`, "tls"}},
		{"sql_mode", "mysql://recon:s3cr3t@db/clicks?sql_mode=ANSI", []string{`"sql_mode"`}},
		{"loc", "mysql://recon:s3cr3t@db/clicks?loc=Local", []string{`"loc"`}},
		{"password_param", "mysql://recon@db/clicks?password=s3cr3t", []string{"user part"}},
		{"bad_port", "mysql://recon:s3cr3t@db:99999/clicks", []string{"port 99999"}},
		{"bad_bool", "mysql://recon:s3cr3t@db/clicks?multiStatements=yes", []string{"not true or false"}},
		{"bad_timeout", "mysql://recon:s3cr3t@db/clicks?timeout=ten", []string{"invalid MySQL STORE_DSN"}},
		{"no_database", "mysql://recon:s3cr3t@db:3306", []string{"name one database"}},
		{"no_user", "mysql://db:3306/clicks", []string{"names no user"}},
		{"no_host", "mysql://recon:s3cr3t@/clicks", []string{"names no host"}},
		{"unencoded_hash", "mysql://recon:12#34@db/clicks", []string{"percent-encode"}},
		{"repeated", "mysql://recon:s3cr3t@db/clicks?tls=true&tls=false", []string{"2 times"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.raw, Options{Name: "STORE_DSN", MySQL: true})
			if err == nil {
				t.Fatalf("Parse(%q) = nil error", tt.raw)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, secret := range []string{"s3cr3t", "12#34"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q shows the password", err)
				}
			}
		})
	}
}

// Only the click store can be MySQL: the history and the lock refuse it
// before anything connects.
func TestParseMySQLOnlyWhereAllowed(t *testing.T) {
	_, err := Parse("mysql://recon:s3cr3t@db/clicks", Options{Name: "HISTORY_DSN", Mode: ReadWrite})
	if err == nil || !strings.Contains(err.Error(), "HISTORY_DSN cannot be MySQL") || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("error %v, want one saying HISTORY_DSN cannot be MySQL", err)
	}
}

func TestRedactMySQL(t *testing.T) {
	for raw, want := range map[string]string{
		"mysql://recon:s3cr3t@db:3306/clicks?tls=true":  "mysql://recon:xxxxx@db:3306/clicks?tls=true",
		"mariadb://recon:p%40ss@db/clicks":              "mariadb://recon:xxxxx@db/clicks",
		"recon:s3cr3t@tcp(db:3306)/clicks?tls=true":     "recon:xxxxx@tcp(db:3306)/clicks?tls=true",
		"recon:p@ss:w@rd@tcp(db:3306)/clicks":           "recon:xxxxx@tcp(db:3306)/clicks",
		"recon:s3cr3t@unix(/run/mysqld.sock)/clicks":    "recon:xxxxx@unix(/run/mysqld.sock)/clicks",
		"sqlite:/data/user@host.db":                     "sqlite:/data/user@host.db",
		"mysql://recon:s3cr3t@db/clicks?socket=/x.sock": "mysql://recon:xxxxx@db/clicks?socket=/x.sock",
	} {
		if got := Redact(raw); got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestMySQLRefused(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&mysql.MySQLError{Number: 1045, Message: "Access denied for user 'recon'@'10.0.0.1' (using password: YES)"}, true},
		{&mysql.MySQLError{Number: 1044}, true},
		{&mysql.MySQLError{Number: 1049, Message: "Unknown database 'clickz'"}, true},
		{mysql.ErrNoTLS, true},
		{&mysql.MySQLError{Number: 1040, Message: "Too many connections"}, false},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
	} {
		if got := Refused(tt.err); got != tt.want {
			t.Errorf("Refused(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
