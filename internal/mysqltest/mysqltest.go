// Package mysqltest gives each MySQL or MariaDB test a database of its own
// on a real server.
//
// The server is MYSQLTEST_DSN, a mysql:// URL as STORE_DSN takes it
// (default mysql://root@127.0.0.1:3306/test); its database is not used, only
// its server and credentials. When it cannot be reached a test is skipped
// with a message, unless CI is set (to anything non-empty): then it fails,
// so that CI never passes by skipping.
package mysqltest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/clickrecon/clickrecon/internal/dsn"
)

// DefaultDSN is the server used when MYSQLTEST_DSN is not set.
const DefaultDSN = "mysql://root@127.0.0.1:3306/test"

// New creates a fresh, uniquely named database for t and returns a handle
// on it and its mysql:// DSN, for a store under test. The handle runs
// several statements in one Exec (a schema file) and its sessions use
// time_zone '+00:00'; the store's own connections are configured by the
// store. The handle is closed and the database dropped when t ends.
func New(t testing.TB) (*sqlx.DB, string) {
	t.Helper()
	base := dsnFromEnv()
	return dbtest.Fresh(t, dbtest.Server{
		Helper: "mysqltest", Kind: "MySQL", EnvVar: "MYSQLTEST_DSN", Where: dsn.Redact(base),
		What: "database", Prefix: "mytest",
		Admin:  func() (*sqlx.DB, error) { return connect(base, "") },
		Create: func(name string) string { return "CREATE DATABASE `" + name + "`" },
		Drop:   func(name string) string { return "DROP DATABASE `" + name + "`" },
		Open: func(name string) (*sqlx.DB, string, error) {
			raw, err := withDatabase(base, name)
			if err != nil {
				return nil, "", err
			}
			db, err := connect(raw, name)
			if err != nil {
				return nil, "", fmt.Errorf("connect to %s: %w", name, err)
			}
			return db, raw, nil
		},
	})
}

// Admin returns a handle on the server with no database chosen, for a test
// that creates users or reads server settings, closed when t ends; it skips
// or fails t as New does when the server cannot be reached.
func Admin(t testing.TB) *sqlx.DB {
	t.Helper()
	base := dsnFromEnv()
	db, err := connect(base, "")
	if err != nil {
		unavailable(t, base, err)
		return nil
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// DSN returns the server's mysql:// URL with the database set to name.
func DSN(t testing.TB, name string) string {
	t.Helper()
	raw, err := withDatabase(dsnFromEnv(), name)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// dsnFromEnv returns MYSQLTEST_DSN, or DefaultDSN when it is not set.
func dsnFromEnv() string {
	if v := os.Getenv("MYSQLTEST_DSN"); v != "" {
		return v
	}
	return DefaultDSN
}

// connect opens a pool on the server of raw, using database (none when
// empty), and checks that the server answers.
func connect(raw, database string) (*sqlx.DB, error) {
	t, err := dsn.Parse(raw, dsn.Options{Name: "MYSQLTEST_DSN", MySQL: true})
	if err != nil {
		return nil, err
	}
	c := t.MySQLConfig.Clone()
	c.DBName = database
	c.MultiStatements = true // a schema file is several statements
	c.Timeout = 3 * time.Second
	c.Params = map[string]string{"time_zone": "'+00:00'"}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	db := sqlx.NewDb(sql.OpenDB(conn), "mysql")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// withDatabase returns raw with its path set to database.
func withDatabase(raw, database string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("MYSQLTEST_DSN is not a URL")
	}
	u.Path = "/" + database
	return u.String(), nil
}

func unavailable(t testing.TB, raw string, err error) {
	t.Helper()
	dbtest.Unavailable(t, "mysqltest", "MySQL", "MYSQLTEST_DSN", dsn.Redact(raw), err)
}
