package pgtest

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/internal/dbtest"
	"github.com/lib/pq"
)

func TestNewGivesEachTestItsOwnSchema(t *testing.T) {
	var schema string
	t.Run("inner", func(t *testing.T) {
		db, dsn := New(t)
		if err := db.Get(&schema, "SELECT current_schema()"); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(schema, "pgtest_") {
			t.Errorf("current_schema() = %q, want a pgtest_ schema", schema)
		}
		if _, err := db.Exec("CREATE TABLE clicks (link_id text)"); err != nil {
			t.Fatal(err)
		}

		// Another pool opened from the DSN, as a store under test would be,
		// sees the same schema.
		c, err := pq.NewConnector(dsn)
		if err != nil {
			t.Fatal(err)
		}
		other := sql.OpenDB(c)
		defer other.Close()
		var n int
		if err := other.QueryRow("SELECT count(*) FROM clicks").Scan(&n); err != nil {
			t.Fatalf("the DSN does not see the test's table: %v", err)
		}

		// A second schema in the same test is a different one.
		db2, _ := New(t)
		var schema2 string
		if err := db2.Get(&schema2, "SELECT current_schema()"); err != nil {
			t.Fatal(err)
		}
		if schema2 == schema {
			t.Errorf("two calls gave the same schema %q", schema)
		}
	})
	if t.Skipped() || schema == "" {
		return
	}

	admin, err := connect(dsnFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var exists bool
	if err := admin.Get(&exists, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("schema %s still exists after its test ended", schema)
	}
}

func TestUnreachableServer(t *testing.T) {
	dbtest.CheckUnreachable(t, "PGTEST_DSN", "postgres://postgres:s3cr3t-pw@127.0.0.1:1/test?sslmode=disable", "s3cr3t-pw", func(t testing.TB) { New(t) })
}
