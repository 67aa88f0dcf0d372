// Package golden checks rendered output (Markdown, HTML, Slack blocks)
// against files in a package's testdata folder. Run a package's tests
// with -update to rewrite them after a deliberate change, then read the
// diff before committing it.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Check compares got with testdata/name, or rewrites the file with -update.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the package's tests with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got):\n%s", name, diff)
	}
}
