package mysqltest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
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
	for _, tt := range []struct {
		name                    string
		ci                      string
		wantSkipped, wantFailed bool
	}{
		{name: "skips_locally", ci: "", wantSkipped: true},
		{name: "fails_in_ci", ci: "true", wantFailed: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MYSQLTEST_DSN", "mysql://root:s3cr3t-pw@127.0.0.1:1/test")
			t.Setenv("CI", tt.ci)
			r := &recorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				New(r)
				r.returned = true
			}()
			<-done
			if r.returned {
				t.Fatal("New returned on an unreachable server")
			}
			if r.skipped != tt.wantSkipped || r.failed != tt.wantFailed {
				t.Errorf("skipped = %v, failed = %v; want %v, %v", r.skipped, r.failed, tt.wantSkipped, tt.wantFailed)
			}
			if !strings.Contains(r.msg, "127.0.0.1:1") || strings.Contains(r.msg, "s3cr3t-pw") {
				t.Errorf("message %q should name the server without its password", r.msg)
			}
		})
	}
}

// recorder is a testing.TB whose Skipf and Fatalf record instead of ending
// the real test.
type recorder struct {
	testing.TB
	skipped, failed, returned bool
	msg                       string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestDatabaseName(t *testing.T) {
	test := "TestCountsEvents/mysql/spring_forward_day_has_23_hours_and_then_some"
	name := databaseName(test)
	if len(name) > 64 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		t.Errorf("database name %q is too long or needs quoting", name)
	}
	if name == databaseName(test) {
		t.Errorf("two database names for one test are equal: %q", name)
	}
}
