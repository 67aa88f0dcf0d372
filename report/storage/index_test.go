package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clickrecon/clickrecon/report"
)

// runOf returns sample's report as the run key, made at generated.
func runOf(t *testing.T, key string, generated time.Time) report.Report {
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
	for _, r := range []report.Report{
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
			b, ctype, err := readRunFile(d, filepath.Clean(key), name)
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
	for _, r := range []report.Report{
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
		if err := d.bucket.WriteAll(ctx, key, []byte(data), "", meta); err != nil {
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

// readRunFile reads the file name of the run runKey whole, as a client
// of OpenRunFile does, and returns its content type.
func readRunFile(d *Dest, runKey, name string) ([]byte, string, error) {
	f, err := d.OpenRunFile(context.Background(), runKey, name)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return b, f.ContentType, err
}

// errPastHead is what a reader gives once the index reads past the
// fields it lists.
var errPastHead = errors.New("read past the fields the index lists")

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errPastHead }

// headOf returns r's report.json cut right after the last field the
// index lists (coverage), before its tables.
func headOf(t *testing.T, r report.Report) []byte {
	t.Helper()
	b, err := report.JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(`"coverage"`))
	end := bytes.IndexByte(b[i:], '}')
	if i < 0 || end < 0 {
		t.Fatal("report.json holds no coverage object")
	}
	return b[:i+end+1]
}

// The index reads a report.json up to the fields it lists and no
// further: a report's tables, however large, are never read.
func TestReadHeadStopsBeforeTheTables(t *testing.T) {
	r := runOf(t, keyNew, time.Date(2026, 10, 29, 1, 0, 0, 0, time.UTC))
	r.Interrupted = "RECON_TIMEOUT reached"
	got, err := readHead(io.MultiReader(bytes.NewReader(headOf(t, r)), failingReader{}), keyNew)
	if err != nil {
		t.Fatalf("readHead read past the fields it lists: %v", err)
	}
	want := report.Report{SchemaVersion: r.SchemaVersion, Tool: report.Tool, RunKey: r.RunKey, WorkspaceID: r.WorkspaceID, StoreID: r.StoreID,
		Window: r.Window, GeneratedAt: r.GeneratedAt, Status: r.Status, Interrupted: r.Interrupted, Totals: r.Totals, Coverage: r.Coverage}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the head of report.json (-want +got):\n%s", diff)
	}
}

// A report.json whose tables come first, or hold fields the index does
// not know, still lists; one that is not clickrecon's for its folder, or
// not JSON, does not.
func TestReadHeadOfOtherShapes(t *testing.T) {
	for _, tt := range []struct {
		name, json string
		ok         bool
	}{
		{"tables_first", `{"days":[{"date":"2026-10-24","hours_with_gap":[{"start":"x"}]}],"links":[],"note":"x","schema_version":1,"tool":"clickrecon","run_key":"` + keyNew + `",` +
			`"workspace_id":"w","store_id":"st_1","window":{"from":"2026-10-24","to":"2026-10-28","tz":"UTC"},"generated_at":"2026-10-29T01:00:00Z","status":"ok","totals":{"api":1,"local":1,"delta":0,"api_summary":null},"coverage":{"days":5}}`, true},
		{"another_run", `{"schema_version":1,"tool":"clickrecon","run_key":"` + keyOld + `","workspace_id":"w","store_id":"s","window":{},"generated_at":"2026-10-29T01:00:00Z","status":"ok","totals":{},"coverage":{}}`, false},
		{"another_tool", `{"schema_version":1,"tool":"other","run_key":"` + keyNew + `"}`, false},
		{"newer_schema", `{"schema_version":2,"tool":"clickrecon","run_key":"` + keyNew + `"}`, false},
		{"not_json", `<html>`, false},
		{"cut_in_the_head", `{"schema_version":1,"tool":"clickrecon","run_key":"` + keyNew + `","workspace_id":"w","sto`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := readHead(strings.NewReader(tt.json), keyNew)
			if tt.ok != (err == nil) {
				t.Fatalf("readHead: %+v, %v: want listed %v", r, err, tt.ok)
			}
			if !tt.ok && !errors.Is(err, ErrNoReport) {
				t.Errorf("readHead: %v, want ErrNoReport", err)
			}
			if tt.ok && (r.Window.From != "2026-10-24" || r.Coverage.Days != 5) {
				t.Errorf("readHead: %+v: want the report's window and coverage", r)
			}
		})
	}
}

// A report.json cut short in its tables (a disk that filled, a copy that
// stopped) is listed by its head, in a folder and in a bucket alike: the
// listing never reads that far.
func TestRunsListAReportCutInItsTables(t *testing.T) {
	r := runOf(t, keyNew, time.Date(2026, 10, 29, 1, 0, 0, 0, time.UTC))
	cut := string(headOf(t, r)) + `, "days": [{"date": "2026-10-`
	ctx := context.Background()

	dir := t.TempDir()
	local := openDest(t, dir)
	if _, err := local.WriteReport(ctx, r); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, keyNew, manifest), cut)

	s := newS3(t)
	bucket := openDest(t, s.dest("nightly"))
	if _, err := bucket.WriteReport(ctx, r); err != nil {
		t.Fatal(err)
	}
	a, err := bucket.bucket.Attributes(ctx, keyNew+"/"+manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := bucket.bucket.WriteAll(ctx, keyNew+"/"+manifest, []byte(cut), "", a.Metadata); err != nil {
		t.Fatal(err)
	}

	for name, d := range map[string]*Dest{"folder": local, "bucket": bucket} {
		t.Run(name, func(t *testing.T) {
			runs, err := d.Runs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 || runs[0].Partial || runs[0].Report.Window != r.Window || runs[0].Report.Coverage != r.Coverage {
				t.Fatalf("runs %+v: want %s listed with its window and coverage", runs, keyNew)
			}
			b, _, err := readRunFile(d, keyNew, manifest)
			if err != nil || string(b) != cut {
				t.Errorf("report.json served as %q, %v: want the file as it is", b, err)
			}
		})
	}
}
