package repair

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/reconcile"
)

// TestPlanNeverWritesThroughSomeoneElsesLink: a symbolic link named
// repair.csv (or surplus.csv, repair.sql) in the plan's folder is replaced
// by the plan; the file it pointed to, which clickrecon did not make, is
// left byte for byte as it was.
func TestPlanNeverWritesThroughSomeoneElsesLink(t *testing.T) {
	dir := t.TempDir()
	theirs := filepath.Join(t.TempDir(), "theirs.txt")
	const content = "someone else's file\n"
	if err := os.WriteFile(theirs, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"repair.csv", "surplus.csv", "repair.sql"} {
		if err := os.Symlink(theirs, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := WritePlan(dir, time.Date(2026, 10, 24, 3, 15, 0, 0, time.UTC), nil, dsn.Postgres); err != nil {
		t.Fatalf("WritePlan: %v", err)
	}
	if b, err := os.ReadFile(theirs); err != nil || string(b) != content {
		t.Errorf("the link's target = %q, %v; want it untouched: %q", b, err, content)
	}
	for _, name := range []string{"repair.csv", "surplus.csv", "repair.sql"} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			t.Errorf("%s is %v, want the plan's own regular file", name, fi.Mode().Type())
		}
		want, _ := os.ReadFile(filepath.Join(dir, AttemptsDir, "20261024T031500Z", name))
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != string(want) {
			t.Errorf("%s = %q, want the attempt's plan %q", name, got, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(left) > 0 {
		t.Errorf("temporary files left in the plan's folder: %v", left)
	}
}

// TestJournalRefusesSomeoneElsesLink: apply.log that is a symbolic link
// is refused before a day is written (the journal's error stops the
// day); its target is not appended to.
func TestJournalRefusesSomeoneElsesLink(t *testing.T) {
	dir := t.TempDir()
	theirs := filepath.Join(t.TempDir(), "theirs.log")
	if err := os.WriteFile(theirs, []byte("theirs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "apply.log")
	if err := os.Symlink(theirs, path); err != nil {
		t.Fatal(err)
	}
	j := FileJournal{Path: path}
	err := j.Intend(reconcile.Date{Year: 2026, Month: 10, Day: 24}, nil)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Intend through a link: %v, want a refusal naming the file", err)
	}
	if b, _ := os.ReadFile(theirs); string(b) != "theirs\n" {
		t.Errorf("the link's target = %q, want it untouched", b)
	}
	// Its own journal, a regular file, is appended to.
	own := FileJournal{Path: filepath.Join(dir, "own.log")}
	for range 2 {
		if err := own.Intend(reconcile.Date{Year: 2026, Month: 10, Day: 24}, nil); err != nil {
			t.Fatalf("Intend: %v", err)
		}
	}
	if b, _ := os.ReadFile(own.Path); strings.Count(string(b), "intend 2026-10-24") != 2 {
		t.Errorf("own journal = %q, want two intend lines", b)
	}
}

// TestPlanAttemptNeverWritesAnEarlierAttemptsFolder: an earlier attempt
// whose plan reached the disk but whose answer was lost (the run stopped
// with an error after the write) keeps its folder; a rerun in the same
// second writes a folder of its own beside it, and replaces the latest
// plan whole.
func TestPlanAttemptNeverWritesAnEarlierAttemptsFolder(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 10, 24, 3, 15, 0, 0, time.UTC)
	first, err := WritePlan(dir, now, nil, dsn.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(first, "repair.csv")
	if err := os.WriteFile(mark, []byte("the earlier attempt's plan\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	second, err := WritePlan(dir, now, nil, dsn.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || filepath.Base(second) != "20261024T031500Z-2" {
		t.Errorf("second attempt's folder = %s, want %s-2 beside the first", second, first)
	}
	if b, _ := os.ReadFile(mark); string(b) != "the earlier attempt's plan\n" {
		t.Errorf("the earlier attempt's repair.csv = %q, want it untouched", b)
	}
	want, _ := os.ReadFile(filepath.Join(second, "repair.sql"))
	if got, _ := os.ReadFile(filepath.Join(dir, "repair.sql")); string(got) != string(want) || len(want) == 0 {
		t.Errorf("latest repair.sql = %q, want the second attempt's %q", got, want)
	}
}
