package report

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// runOf returns sample's report as the run key, made at generated.
func runOf(t *testing.T, key string, generated time.Time) Report {
	t.Helper()
	r := sample(t)
	r.RunKey, r.GeneratedAt = key, generated
	return r
}

const (
	keyOld     = "20261020_20261022_aaaaaaaaaaaa"
	keyNew     = "20261024_20261028_bbbbbbbbbbbb"
	keyForeign = "20261024_20261028_cccccccccccc"
	keyPartial = "20261101_20261101_dddddddddddd"
	keyLink    = "20261024_20261028_eeeeeeeeeeee"
	keyWriting = "20261102_20261102_ffffffffffff"
	keyOther   = "20261103_20261103_abcdefabcdef"
)

// listed is what Runs says of each run: its key, and whether it is partial.
func listed(runs []Run) []string {
	var out []string
	for _, r := range runs {
		s := r.Key
		if r.Partial {
			s += " partial"
		}
		out = append(out, s)
	}
	return out
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// localReports is a folder with two runs of clickrecon's and, beside
// them, what must not be served as a report: another tool's report.json
// in a folder named as a run key, a folder without report.json, a run
// being written (its temporary folder), a link to a run's folder, and a
// run folder whose report.html is a link out of the folder.
func localReports(t *testing.T) (string, *Dest) {
	t.Helper()
	dir := t.TempDir()
	d := openDest(t, dir)
	ctx := context.Background()
	for _, r := range []Report{
		runOf(t, keyOld, time.Date(2026, 10, 23, 1, 0, 0, 0, time.UTC)),
		runOf(t, keyNew, time.Date(2026, 10, 29, 1, 0, 0, 0, time.UTC)),
	} {
		if _, err := d.WriteReport(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, keyForeign, "report.json"), `{"schema_version":1,"tool":"other","run_key":"`+keyForeign+`"}`)
	writeFile(t, filepath.Join(dir, keyForeign, "report.html"), "not ours")
	writeFile(t, filepath.Join(dir, keyPartial, "days.csv"), "date\n")
	writeFile(t, filepath.Join(dir, "."+keyWriting+newSuffix+"123", "days.csv"), "date\n")
	writeFile(t, filepath.Join(dir, "notes.txt"), "someone's")
	writeFile(t, filepath.Join(dir, keyOther, "notes.txt"), "a folder of someone's, named like a run")
	if err := os.Symlink(filepath.Join(dir, keyNew), filepath.Join(dir, keyLink)); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	writeFile(t, secret, "secret")
	html := filepath.Join(dir, keyOld, "report.html")
	if err := os.Remove(html); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, html); err != nil {
		t.Fatal(err)
	}
	return dir, d
}

func TestRunsOfAFolder(t *testing.T) {
	_, d := localReports(t)
	runs, err := d.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The partial folders were made last: newest first.
	want := []string{keyWriting + " partial", keyPartial + " partial", keyNew, keyOld}
	got := listed(runs)
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Fatalf("runs (-want +got):\n%s", diff)
	}
	if got[len(got)-2] != keyNew || got[len(got)-1] != keyOld {
		t.Errorf("runs %q: the finished runs come newest first", got)
	}
	for _, r := range runs {
		if r.Key == keyNew && (r.Report.Window.From != "2026-10-24" || r.Report.Status != sample(t).Status) {
			t.Errorf("%s: window %+v, status %q: want the report's", r.Key, r.Report.Window, r.Report.Status)
		}
	}
}

func TestReadRunFileServesOnlyClickreconsFiles(t *testing.T) {
	_, d := localReports(t)
	checkReadRunFile(t, d, map[string]bool{
		keyOld + "/report.html":  false, // a link out of the folder
		keyLink + "/report.html": false,
	})
}

// checkReadRunFile checks which files d serves; extra overrides the
// cases shared by every destination.
func checkReadRunFile(t *testing.T, d *Dest, extra map[string]bool) {
	t.Helper()
	cases := map[string]bool{
		keyNew + "/report.html":      true,
		keyNew + "/report.json":      true,
		keyNew + "/days.csv":         true,
		keyOld + "/report.md":        true,
		keyNew + "/notes.txt":        false, // not a file clickrecon writes
		keyNew + "/..":               false,
		keyNew + "/../" + keyOld:     false,
		"../" + keyNew + "/days.csv": false,
		keyForeign + "/report.html":  false, // another tool's folder
		keyForeign + "/report.json":  false,
		keyPartial + "/days.csv":     false, // no report.json: not a report
		keyWriting + "/days.csv":     false,
		"." + keyNew + "/days.csv":   false,
	}
	for k, v := range extra {
		cases[k] = v
	}
	for p, want := range cases {
		t.Run(p, func(t *testing.T) {
			key, name := filepath.Split(p)
			b, ctype, err := d.ReadRunFile(context.Background(), filepath.Clean(key), name)
			if want {
				if err != nil || len(b) == 0 || ctype == "" {
					t.Fatalf("got %d bytes of %q, error %v: want the file", len(b), ctype, err)
				}
				return
			}
			if !errors.Is(err, ErrNoReport) {
				t.Fatalf("got %q, error %v: want ErrNoReport", b, err)
			}
		})
	}
}

// In an object store, a run folder whose report.json is missing (being
// written) or of another write than its other files is partial, and none
// of its files is served; another tool's objects are not listed.
func TestRunsOfABucket(t *testing.T) {
	s := newS3(t)
	d := openDest(t, s.dest("nightly"))
	ctx := context.Background()
	for _, r := range []Report{
		runOf(t, keyOld, time.Date(2026, 10, 23, 1, 0, 0, 0, time.UTC)),
		runOf(t, keyNew, time.Date(2026, 10, 29, 1, 0, 0, 0, time.UTC)),
		runOf(t, keyWriting, time.Date(2026, 11, 3, 1, 0, 0, 0, time.UTC)),
	} {
		if _, err := d.WriteReport(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	put := func(key, data string, meta map[string]string) {
		t.Helper()
		if err := d.bucket.WriteAll(ctx, key, []byte(data), &writerOptions{Metadata: meta}); err != nil {
			t.Fatal(err)
		}
	}
	put(keyForeign+"/report.json", `{"schema_version":1,"tool":"other","run_key":"`+keyForeign+`"}`, nil)
	put(keyForeign+"/report.html", "not ours", nil)
	put(keyPartial+"/days.csv", "date\n", map[string]string{attemptKey: "w1"})
	put("notes/x", "someone's", nil)
	// A second write of keyWriting has replaced days.csv, not yet
	// report.json: the folder mixes two writes.
	put(keyWriting+"/days.csv", "date\n", map[string]string{attemptKey: "w2"})

	runs, err := d.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{keyWriting + " partial", keyPartial + " partial", keyNew, keyOld}
	if diff := cmp.Diff(want, listed(runs), cmpSorted); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	checkReadRunFile(t, d, nil)
}
