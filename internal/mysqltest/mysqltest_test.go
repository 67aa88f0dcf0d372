package mysqltest

import (
	"strings"
	"testing"

	"github.com/clickrecon/clickrecon/internal/dbtest"
)

func TestNewGivesEachTestItsOwnDatabase(t *testing.T) {
	var name string
	t.Run("inner", func(t *testing.T) {
		db, dsn := New(t)
		if err := db.Get(&name, "SELECT DATABASE()"); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "mytest_") || !strings.HasSuffix(dsn, "/"+name) {
			t.Errorf("database %q, DSN %q; want a mytest_ database the DSN names", name, dsn)
		}
		// A schema file is several statements in one Exec.
		db.MustExec("CREATE TABLE clicks (link_id text); INSERT INTO clicks VALUES ('a')")
		db2, _ := New(t)
		var other string
		if err := db2.Get(&other, "SELECT DATABASE()"); err != nil {
			t.Fatal(err)
		}
		if other == name {
			t.Errorf("two databases of one test are both %q", name)
		}
	})
	var n int
	if err := Admin(t).Get(&n, "SELECT count(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s was not dropped when its test ended", name)
	}
}

func TestUnreachableServer(t *testing.T) {
	dbtest.CheckUnreachable(t, "MYSQLTEST_DSN", "mysql://root:s3cr3t-pw@127.0.0.1:1/test", "s3cr3t-pw", func(t testing.TB) { New(t) })
}
