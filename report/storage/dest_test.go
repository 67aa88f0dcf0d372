package storage

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/clickrecon/clickrecon/internal/s3test"
	"github.com/clickrecon/clickrecon/report"
)

// folder returns the names and contents of the files in dir.
func folder(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = string(b)
	}
	return got
}

// names returns the names in dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func openDest(t *testing.T, dirOrURL string) *Dest {
	t.Helper()
	d, err := Open(context.Background(), dirOrURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// A rerun replaces the run's folder as a whole: a file only the previous
// run had does not survive next to the new report.json.
func TestWriteReplacesTheFolderAsAWhole(t *testing.T) {
	dir := t.TempDir()
	d := openDest(t, dir)
	ctx := context.Background()
	v1 := []report.File{{Name: "report.json", Data: []byte(`{"v":1}`)}, {Name: "report.html", Data: []byte("v1")}, {Name: "report.old.csv", Data: []byte("v1")}}
	if err := d.Write(ctx, "key", v1); err != nil {
		t.Fatal(err)
	}
	v2 := []report.File{{Name: "report.json", Data: []byte(`{"v":2}`)}, {Name: "report.html", Data: []byte("v2")}}
	if err := d.Write(ctx, "key", v2); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"report.json": `{"v":2}`, "report.html": "v2"}
	if diff := cmp.Diff(want, folder(t, filepath.Join(dir, "key"))); diff != "" {
		t.Errorf("the run's folder (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"key"}, names(t, dir)); diff != "" {
		t.Errorf("the report folder holds more than the run (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(dir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o755 {
		t.Errorf("the run's folder has mode %v, want 0755", perm)
	}
}

// A write that fails halfway (a full disk, say) leaves the previous report
// whole: never a report.json of one run beside the report.html of another.
func TestFailedWriteLeavesThePreviousReport(t *testing.T) {
	dir := t.TempDir()
	d := openDest(t, dir)
	ctx := context.Background()
	v1 := []report.File{{Name: "report.json", Data: []byte(`{"v":1}`)}, {Name: "report.html", Data: []byte("v1")}}
	if err := d.Write(ctx, "key", v1); err != nil {
		t.Fatal(err)
	}
	// The second report.html cannot be created: the write fails after
	// report.json and the first report.html were written.
	broken := []report.File{{Name: "report.json", Data: []byte(`{"v":2}`)}, {Name: "report.html", Data: []byte("v2")}, {Name: "report.html", Data: []byte("v2")}}
	if err := d.Write(ctx, "key", broken); err == nil {
		t.Fatal("the write did not fail")
	}
	want := map[string]string{"report.json": `{"v":1}`, "report.html": "v1"}
	if diff := cmp.Diff(want, folder(t, filepath.Join(dir, "key"))); diff != "" {
		t.Errorf("the previous report (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"key"}, names(t, dir)); diff != "" {
		t.Errorf("a failed write left something behind (-want +got):\n%s", diff)
	}
}

// Two writes of one run's folder at once, locally: every swap is whole,
// so the folder ends as one write's files, never a mix, with nothing left
// beside it; a write that finds the folder created under it by the other
// exchanges with it instead of failing.
func TestConcurrentWritesOfOneFolder(t *testing.T) {
	dir := t.TempDir()
	d := openDest(t, dir)
	sets := map[string][]report.File{
		"A": {{Name: "report.json", Data: []byte("A")}, {Name: "a.csv", Data: []byte("A")}},
		"B": {{Name: "report.json", Data: []byte("B")}, {Name: "b.csv", Data: []byte("B")}, {Name: "report.html", Data: []byte("B")}},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for _, name := range []string{"A", "B"} {
		wg.Go(func() {
			for range 20 {
				if err := d.Write(context.Background(), "key", sets[name]); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a write failed: %v", err)
	}
	got := folder(t, filepath.Join(dir, "key"))
	want := map[string]string{}
	for _, f := range sets[got["report.json"]] {
		want[f.Name] = string(f.Data)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the folder is not one write's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"key"}, names(t, dir)); diff != "" {
		t.Errorf("left beside the folder (-want +got):\n%s", diff)
	}
}

// The two-rename fallback, for file systems without an atomic exchange,
// also replaces the folder and leaves nothing behind.
func TestSwapRenames(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "key")
	for i, content := range []string{"v1", "v2"} {
		tmp, err := os.MkdirTemp(dir, ".key"+newSuffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, "report.json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		old, err := swapRenames(tmp, final)
		if err != nil {
			t.Fatal(err)
		}
		if (old != "") != (i > 0) {
			t.Errorf("write %d: previous folder %q", i+1, old)
		}
		if old != "" {
			if got := folder(t, old)["report.json"]; got != "v1" {
				t.Errorf("the folder set aside holds %q, want v1", got)
			}
			os.RemoveAll(old)
		}
		if got := folder(t, final)["report.json"]; got != content {
			t.Errorf("write %d: report.json %q, want %q", i+1, got, content)
		}
	}
	if diff := cmp.Diff([]string{"key"}, names(t, dir)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWriteRefusesNamesOutsideTheFolder(t *testing.T) {
	d := openDest(t, t.TempDir())
	for _, tt := range []struct{ key, name string }{
		{"../up", "report.json"}, {"a/b", "report.json"}, {"", "report.json"}, {".hidden", "report.json"},
		{"key", "../report.json"}, {"key", ""},
	} {
		if err := d.Write(context.Background(), tt.key, []report.File{{Name: tt.name, Data: nil}}); err == nil {
			t.Errorf("Write(%q, %q) succeeded", tt.key, tt.name)
		}
	}
}

// Pruning removes only what clickrecon made: folders named by a run key
// that hold clickrecon's report.json for that run, and its temporary
// folders under their exact names. A RECON_REPORT_DIR shared with other
// files loses nothing else, however old and however named.
func TestPruneRemovesOnlyItsOwnFolders(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	ours := func(key string) string {
		return `{"schema_version": 1, "tool": "clickrecon", "run_key": "` + key + `"}`
	}
	mk := func(name string, age time.Duration, files map[string]string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		for n, content := range files {
			if err := os.WriteFile(filepath.Join(p, n), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	day := 24 * time.Hour
	const (
		oldKey     = "20260801_20260803_0123456789ab"
		recentKey  = "20261101_20261101_0123456789ab"
		currentKey = "20260701_20260701_0123456789ab"
		otherKey   = "20260802_20260802_0123456789ab"
		copiedKey  = "20260803_20260803_0123456789ab"
		legacyKey  = "20260804_20260804_0123456789ab"
	)
	mk(oldKey, 31*day, map[string]string{"report.json": ours(oldKey), "report.html": "<html>"})
	mk(recentKey, 29*day, map[string]string{"report.json": ours(recentKey)})
	mk(currentKey, 90*day, map[string]string{"report.json": ours(currentKey)}) // this run's
	// Another tool's report in a folder that happens to be named like a run.
	mk(otherKey, 90*day, map[string]string{"report.json": `{"schema_version": 1, "run_key": "` + otherKey + `"}`, "report.html": "theirs"})
	mk(copiedKey, 90*day, map[string]string{"report.json": ours(oldKey)}) // a copy, not this run's folder
	mk(legacyKey, 90*day, map[string]string{"report.json": `{"schema_version": 1}`})
	mk("old_report", 90*day, map[string]string{"report.json": ours("old_report")}) // not a run key
	mk("not_a_report", 90*day, nil)
	mk("."+oldKey+newSuffix+"123", 2*time.Hour, nil)
	mk("."+oldKey+oldSuffix+"77", 2*time.Hour, map[string]string{"report.json": ours(oldKey)})
	mk("."+recentKey+newSuffix+"456", time.Minute, nil) // a write under way
	for _, foreign := range []string{".git.old-backup", ".photos" + oldSuffix + "2019", "." + oldKey + oldSuffix + "x1", ".old_report" + newSuffix + "1"} {
		mk(foreign, 90*day, map[string]string{"keep": "me"})
	}
	if err := os.WriteFile(filepath.Join(dir, "old_file.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A link named like a run, to an old report of ours elsewhere: neither
	// it nor what it points to is removed.
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "report.json"), []byte(ours("20260805_20260805_0123456789ab")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "20260805_20260805_0123456789ab")); err != nil {
		t.Fatal(err)
	}
	before := names(t, dir)

	d := openDest(t, dir)
	removed, err := d.Prune(now, 30*day, currentKey)
	if err != nil {
		t.Fatal(err)
	}
	gone := []string{"." + oldKey + newSuffix + "123", "." + oldKey + oldSuffix + "77", oldKey}
	var want []string
	for _, n := range gone {
		want = append(want, filepath.Join(dir, n))
	}
	slices.Sort(removed)
	slices.Sort(want)
	if diff := cmp.Diff(want, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	left := slices.DeleteFunc(before, func(n string) bool { return slices.Contains(gone, n) })
	if diff := cmp.Diff(left, names(t, dir)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "report.json")); err != nil {
		t.Errorf("the link's target was touched: %v", err)
	}

	if removed, err := d.Prune(now, 0, currentKey); err != nil || len(removed) > 0 {
		t.Errorf("keep 0 removed %v, %v: want nothing (keep everything)", removed, err)
	}
}

// Every report.json clickrecon writes carries its mark, whatever Report
// it was given: the mark Prune looks for.
func TestReportJSONCarriesTheToolMark(t *testing.T) {
	dir := t.TempDir()
	r := sample(t)
	r.Tool = ""
	out, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if !isOwnReport(out, r.RunKey) {
		t.Errorf("the report just written is not recognised as clickrecon's:\n%s", folder(t, out)["report.json"])
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	d := openDest(t, "file://"+filepath.ToSlash(dir))
	if got, want := d.Location("key"), filepath.Join(dir, "key"); got != want {
		t.Errorf("file:// Location %q, want %q", got, want)
	}
	for _, bad := range []string{
		"", "ftp://host/reports", "s3://bucket/reports?prefix=x", "s3:///reports",
		"file://host/reports", "file:///reports?x=1",
	} {
		if d, err := Open(context.Background(), bad); err == nil {
			d.Close()
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

func TestHTMLURL(t *testing.T) {
	tests := []struct {
		base, key, want string
	}{
		{"https://reports.example.com", "20261126_20261128_0123", "https://reports.example.com/20261126_20261128_0123/report.html"},
		{"https://reports.example.com/clickrecon/", "k", "https://reports.example.com/clickrecon/k/report.html"},
		{"https://reports.example.com/a%20b", "k", "https://reports.example.com/a%20b/k/report.html"},
		{"http://proxy.internal:8080/r?view=1", "k", "http://proxy.internal:8080/r/k/report.html?view=1"},
	}
	for _, tt := range tests {
		got, err := HTMLURL(tt.base, tt.key)
		if err != nil || got != tt.want {
			t.Errorf("HTMLURL(%q, %q) = %q, %v; want %q", tt.base, tt.key, got, err, tt.want)
		}
	}
	for _, bad := range []struct{ base, key string }{
		{"s3://bucket/reports", "k"}, {"reports.example.com", "k"}, {"https://user:pw@example.com", "k"},
		{"https://example.com", "../k"}, {"https://example.com", "a/b"},
	} {
		if got, err := HTMLURL(bad.base, bad.key); err == nil {
			t.Errorf("HTMLURL(%q, %q) = %q, want an error", bad.base, bad.key, got)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// s3Server is an in-process S3 (gofakes3, in memory) with a bucket
// "reports". It records the keys of every PUT, in order, and fails the
// PUTs whose key ends with failSuffix.
type s3Server struct {
	url        string
	backend    *s3mem.Backend
	fake       http.Handler
	mu         sync.Mutex
	puts       []string
	failSuffix string
	// beforePut, when set, runs before a PUT reaches the store; it
	// returns true when it answered the request itself.
	beforePut func(w http.ResponseWriter, r *http.Request) bool
}

func newS3(t *testing.T) *s3Server {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("reports"); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(backend).Server()
	s := &s3Server{backend: backend, fake: fake}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			s.mu.Lock()
			s.puts = append(s.puts, r.URL.Path)
			fail := s.failSuffix != "" && strings.HasSuffix(r.URL.Path, s.failSuffix)
			hook := s.beforePut
			s.mu.Unlock()
			if hook != nil && hook(w, r) {
				return
			}
			if fail {
				w.WriteHeader(http.StatusForbidden)
				w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>denied</Message></Error>`))
				return
			}
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	s3test.Isolate(t)
	return s
}

// dest returns the s3:// URL of prefix in the bucket, pointed at s.
func (s *s3Server) dest(prefix string) string { return s3test.Dir(s.url, prefix) }

func (s *s3Server) putKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.puts)
}

func TestWriteToS3(t *testing.T) {
	s := newS3(t)
	r := sample(t)
	where, err := Write(s.dest("clickrecon/nightly"), r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "s3://reports/clickrecon/nightly/" + r.RunKey; where != want {
		t.Errorf("location %q, want %q (and no query)", where, want)
	}
	puts := s.putKeys()
	var want []string
	for _, name := range report.Files {
		want = append(want, "/reports/clickrecon/nightly/"+r.RunKey+"/"+name)
	}
	if diff := cmp.Diff(want, puts, cmpSorted); diff != "" {
		t.Errorf("objects written (-want +got):\n%s", diff)
	}
	if len(puts) == 0 || !strings.HasSuffix(puts[len(puts)-1], "/report.json") {
		t.Errorf("PUTs in order %q: report.json must be the last, the one readers trust", puts)
	}

	for _, at := range []string{
		s.dest("clickrecon/nightly/" + r.RunKey),
		s.dest("clickrecon/nightly/" + r.RunKey + "/report.json"),
	} {
		back, err := ReadReport(context.Background(), at)
		if err != nil {
			t.Fatalf("ReadReport: %v", err)
		}
		if back.RunKey != r.RunKey || back.Status != r.Status || len(back.Days) != len(r.Days) {
			t.Errorf("read back %s/%s with %d days, want %s/%s with %d", back.RunKey, back.Status, len(back.Days), r.RunKey, r.Status, len(r.Days))
		}
	}
}

// A write that fails in the middle never writes report.json: a reader
// keeps seeing the previous run's.
func TestFailedS3WriteNeverWritesReportJSON(t *testing.T) {
	s := newS3(t)
	s.failSuffix = "/report.html"
	if _, err := Write(s.dest("r"), sample(t)); err == nil {
		t.Fatal("the write did not fail")
	}
	for _, key := range s.putKeys() {
		if strings.HasSuffix(key, "/report.json") {
			t.Errorf("report.json was written (%s) although report.html failed", key)
		}
	}
}

func TestReadReportFromAFolder(t *testing.T) {
	dir := t.TempDir()
	r := sample(t)
	out, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []string{out, filepath.Join(out, "report.json"), "file://" + filepath.ToSlash(out)} {
		back, err := ReadReport(context.Background(), at)
		if err != nil {
			t.Fatalf("ReadReport(%s): %v", at, err)
		}
		if back.RunKey != r.RunKey {
			t.Errorf("ReadReport(%s): run key %q, want %q", at, back.RunKey, r.RunKey)
		}
	}
	if _, err := ReadReport(context.Background(), filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing report was read")
	}
}

var cmpSorted = cmp.Transformer("sorted", func(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
})

// BenchmarkReplaceFolder is the cost of putting a run's report folder in
// place: eight files written and synced, the folder swapped in. On a disk
// that syncs for real it is mostly the syncs.
func BenchmarkReplaceFolder(b *testing.B) {
	dir := b.TempDir()
	files := make([]report.File, 8)
	for i := range files {
		files[i] = report.File{Name: fmt.Sprintf("file%d", i), Data: bytes.Repeat([]byte("x"), 20_000)}
	}
	for b.Loop() {
		if err := replaceFolder(dir, "run", files); err != nil {
			b.Fatal(err)
		}
	}
}
