// Package pgtest gives each PostgreSQL test a schema of its own on a real
// server.
//
// The server is PGTEST_DSN, a lib/pq URL (default
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable). When it cannot
// be reached a test is skipped with a message, unless CI is set (to
// anything non-empty): then it fails, so that CI never passes by skipping.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/clickrecon/clickrecon/internal/dbtest"
)

// DefaultDSN is the server used when PGTEST_DSN is not set.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// New creates a fresh, uniquely named schema for t and returns a handle
// whose connections all use it, and the DSN of that handle: its
// search_path names the schema, so that anything else opened from the DSN
// (a store under test) sees the same tables. The handle is closed and the
// schema dropped when t ends.
func New(t testing.TB) (*sqlx.DB, string) {
	t.Helper()
	base := dsnFromEnv()
	return dbtest.Fresh(t, dbtest.Server{
		Helper: "pgtest", Kind: "PostgreSQL", EnvVar: "PGTEST_DSN", Where: redact(base),
		What: "schema", Prefix: "pgtest",
		Admin:  func() (*sqlx.DB, error) { return connect(base) },
		Create: func(name string) string { return "CREATE SCHEMA " + pq.QuoteIdentifier(name) },
		Drop:   func(name string) string { return "DROP SCHEMA " + pq.QuoteIdentifier(name) + " CASCADE" },
		Open: func(schema string) (*sqlx.DB, string, error) {
			dsn, err := withParam(base, "search_path", schema)
			if err != nil {
				return nil, "", err
			}
			db, err := connect(dsn)
			if err != nil {
				return nil, "", fmt.Errorf("connect with search_path %s: %w", schema, err)
			}
			return db, dsn, nil
		},
	})
}

// dsnFromEnv returns PGTEST_DSN, or DefaultDSN when it is not set.
func dsnFromEnv() string {
	if dsn := os.Getenv("PGTEST_DSN"); dsn != "" {
		return dsn
	}
	return DefaultDSN
}

// connect opens a pool on dsn and checks that the server answers.
func connect(dsn string) (*sqlx.DB, error) {
	dsn, err := withDefault(dsn, "connect_timeout", "5")
	if err != nil {
		return nil, err
	}
	c, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	db := sqlx.NewDb(sql.OpenDB(c), "postgres")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// withParam returns the URL dsn with the query parameter key set to value.
func withParam(dsn, key, value string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("PGTEST_DSN must be a postgres:// URL: %s", redact(dsn))
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func withDefault(dsn, key, value string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("PGTEST_DSN must be a postgres:// URL: %s", redact(dsn))
	}
	if u.Query().Get(key) != "" {
		return dsn, nil
	}
	return withParam(dsn, key, value)
}

// redact hides the password of dsn.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparseable DSN)"
	}
	return u.Redacted()
}
