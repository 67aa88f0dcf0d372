package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/report"
)

// Run is one run folder of a destination, as an index of its runs shows
// it.
type Run struct {
	Key string
	// Partial is a folder that holds clickrecon's files but no whole
	// report: a write under way, or one that stopped. Report is then
	// empty and none of its files is served.
	Partial bool
	// Report holds what report.json says before its tables (see
	// readHead): its days, links, countries, findings, requests and
	// drill-down are left empty. A run whose folder is gone (pruned) but
	// whose repair plan is still there has no Report and is not Partial.
	Report   report.Report
	Modified time.Time // when the folder (or its newest object) last changed
	// Repair says that the run's repair plan, a folder repair-<run key>
	// beside it, is there (see RepairFiles).
	Repair bool
}

// ErrNoReport matches a run or a file that a destination does not serve:
// not a run folder of clickrecon's, a folder without a whole report, or a
// file clickrecon does not write.
var ErrNoReport = errors.New("no such report file")

// errNotOurs is a report.json that clickrecon did not write for the run
// folder it is in: the folder is not listed at all.
var errNotOurs = fmt.Errorf("%w: the report.json is not clickrecon's for its folder", ErrNoReport)

// Runs lists the run folders of the destination, newest first: each
// folder named as a run key whose report.json is clickrecon's, for that
// run key, and whole (see ReadReport), and as Partial each folder of
// clickrecon's that has no such report.json yet; a run with a repair plan
// (repair-<run key>/, in a local folder) says so, and a plan whose run
// folder is gone is listed on its own. Folders and objects of other tools
// are left out. It only reads, and holds only the fields it lists.
func (d *Dest) Runs(ctx context.Context) ([]Run, error) {
	var runs []Run
	var err error
	if d.bucket == nil {
		runs, err = d.localRuns()
	} else {
		runs, err = d.objectRuns(ctx)
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(runs, func(a, b Run) int {
		if c := b.when().Compare(a.when()); c != 0 {
			return c
		}
		return strings.Compare(b.Key, a.Key)
	})
	return runs, nil
}

// when is the time the index sorts a run by: when its report was made,
// or, for a partial folder or a repair plan alone, when it last changed.
func (r Run) when() time.Time {
	if r.Report.RunKey == "" {
		return r.Modified
	}
	return r.Report.GeneratedAt
}

// localRuns lists a local folder's runs. A write in progress is a
// temporary folder beside the run's (see replaceFolder): its run is
// Partial until the rename.
func (d *Dest) localRuns() ([]Run, error) {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("list reports in %s: %w", d.dir, err)
	}
	byKey := map[string]Run{}
	repairs := map[string]time.Time{}
	for _, e := range entries {
		if !e.IsDir() { // a symbolic link is not followed
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		name := e.Name()
		switch {
		case isRunKey(name):
			r, err := d.localReport(name)
			if err == nil {
				byKey[name] = Run{Key: name, Report: r, Modified: fi.ModTime()}
			} else if errors.Is(err, fs.ErrNotExist) && holdsOurs(filepath.Join(d.dir, name)) {
				if _, done := byKey[name]; !done {
					byKey[name] = Run{Key: name, Partial: true, Modified: fi.ModTime()}
				}
			}
		case isLeftover(name) && strings.Contains(name, newSuffix):
			key := name[1 : 1+runKeyLen]
			if _, seen := byKey[key]; !seen {
				byKey[key] = Run{Key: key, Partial: true, Modified: fi.ModTime()}
			}
		case isRepairFolder(name):
			repairs[name[len(RepairPrefix):]] = fi.ModTime()
		}
	}
	for key, mod := range repairs {
		r, ok := byKey[key]
		if !ok {
			r = Run{Key: key, Modified: mod}
		}
		r.Repair = true
		byKey[key] = r
	}
	// A finished folder may have been listed after its temporary one.
	for key, r := range byKey {
		if !r.Partial {
			continue
		}
		if rep, err := d.localReport(key); err == nil {
			byKey[key] = Run{Key: key, Report: rep, Modified: r.Modified, Repair: r.Repair}
		}
	}
	return slices.Collect(maps.Values(byKey)), nil
}

// holdsOurs reports whether the folder dir holds a file named as one
// clickrecon writes: a folder of other files is not a run of clickrecon's.
func holdsOurs(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if slices.Contains(report.Files, e.Name()) {
			return true
		}
	}
	return false
}

// localReport reads the fields the index lists from the report.json of
// the local run folder runKey (see readHead), when clickrecon wrote it
// for that run. A folder without one is fs.ErrNotExist; a folder or file
// that is a symbolic link, or a report.json of another tool or run, is
// ErrNoReport.
func (d *Dest) localReport(runKey string) (report.Report, error) {
	f, err := d.openLocal(runKey, manifest)
	if err != nil {
		return report.Report{}, err
	}
	defer f.Close()
	return readHead(f, runKey)
}

// openLocal opens the file at the plain names elems under the
// destination's folder: each a folder, the last a regular file, none a
// symbolic link. A name that does not exist is fs.ErrNotExist; anything
// else that is not such a file is ErrNoReport.
func (d *Dest) openLocal(elems ...string) (*os.File, error) {
	// The root keeps the open inside the folder even if a name is swapped
	// for a link after the checks below.
	root, err := os.OpenRoot(d.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for i := range elems {
		fi, err := root.Lstat(path.Join(elems[:i+1]...))
		if err != nil {
			return nil, err
		}
		if last := i == len(elems)-1; last && !fi.Mode().IsRegular() || !last && !fi.IsDir() {
			return nil, ErrNoReport
		}
	}
	f, err := root.Open(path.Join(elems...))
	if err != nil {
		return nil, ErrNoReport
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, ErrNoReport
	}
	return f, nil
}

// headFields are the fields of report.json the index lists: each written
// before the report's tables (days, links, ...). required counts the
// ones every report.json holds.
func headFields(r *report.Report) (fields map[string]any, required int) {
	fields = map[string]any{
		"schema_version": &r.SchemaVersion, "tool": &r.Tool, "run_key": &r.RunKey,
		"workspace_id": &r.WorkspaceID, "store_id": &r.StoreID, "window": &r.Window,
		"generated_at": &r.GeneratedAt, "status": &r.Status, "totals": &r.Totals,
		"coverage": &r.Coverage, "interrupted": &r.Interrupted,
	}
	return fields, len(fields) - 1 // interrupted is left out when empty
}

// readHead decodes, from a run folder runKey's report.json, the fields the
// index lists (headFields), when clickrecon wrote it for that run. It
// reads the stream one field at a time and stops once it has them all,
// so that a report's tables (of any size, or cut short) are never read,
// let alone held: a report.json is listed by its first few hundred
// bytes. A field it does not list, placed before them, is skipped token by
// token.
func readHead(r io.Reader, runKey string) (report.Report, error) {
	var rep report.Report
	fields, required := headFields(&rep)
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return report.Report{}, errNotOurs
	}
	seen := map[string]bool{}
	for required > 0 && dec.More() {
		t, err := dec.Token()
		if err != nil {
			return report.Report{}, errNotOurs
		}
		key, _ := t.(string)
		target, ok := fields[key]
		if !ok {
			if err := skipValue(dec); err != nil {
				return report.Report{}, errNotOurs
			}
			continue
		}
		if err := dec.Decode(target); err != nil {
			return report.Report{}, errNotOurs
		}
		if !seen[key] && key != "interrupted" {
			required--
		}
		seen[key] = true
	}
	if rep.Tool != report.Tool || rep.SchemaVersion < 1 || rep.SchemaVersion > report.SchemaVersion || rep.RunKey != runKey {
		return report.Report{}, errNotOurs
	}
	return rep, nil
}

// skipValue reads past the next value of dec, token by token.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// objectRuns lists an object store's runs: each "folder" under the
// prefix named as a run key. One that holds clickrecon's objects but no
// whole report.json is Partial.
func (d *Dest) objectRuns(ctx context.Context) ([]Run, error) {
	var runs []Run
	it := d.bucket.List("", "/")
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return runs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list reports in %s: %w", d.base, err)
		}
		key := strings.TrimSuffix(obj.Key, "/")
		if !obj.IsDir || !isRunKey(key) {
			continue
		}
		r, _, err := d.objectReport(ctx, key)
		switch {
		case err == nil:
			runs = append(runs, Run{Key: key, Report: r, Modified: r.GeneratedAt})
		case errors.Is(err, errNotOurs):
		case errors.Is(err, ErrNoReport), errors.Is(err, ErrConcurrentWrite):
			if mod, ok, err := d.newestObject(ctx, key); err != nil {
				return nil, err
			} else if ok {
				runs = append(runs, Run{Key: key, Partial: true, Modified: mod})
			}
		default:
			return nil, err
		}
	}
}

// newestObject returns when the newest of clickrecon's objects under
// runKey/ was written, and whether there is one.
func (d *Dest) newestObject(ctx context.Context, runKey string) (time.Time, bool, error) {
	objs, err := d.objects(ctx, runKey+"/")
	if err != nil || len(objs) == 0 {
		return time.Time{}, false, err
	}
	var newest time.Time
	for _, a := range objs {
		if a.ModTime.After(newest) {
			newest = a.ModTime
		}
	}
	return newest, true, nil
}

// objectReport reads the fields the index lists from the report.json of
// the run folder runKey in an object store (see readHead), when it is
// clickrecon's for that run and its folder is whole (every other file of
// clickrecon's there is of the same write), and returns its write id. A
// folder without one is ErrNoReport.
func (d *Dest) objectReport(ctx context.Context, runKey string) (report.Report, string, error) {
	f, id, err := d.openObject(ctx, runKey+"/"+manifest, "")
	if err != nil {
		return report.Report{}, "", err
	}
	r, err := readHead(f, runKey)
	if err := f.Close(); err != nil {
		return report.Report{}, "", err
	}
	if err != nil {
		return report.Report{}, "", err
	}
	if id != "" {
		if err := d.checkWhole(ctx, runKey+"/", id); err != nil {
			return report.Report{}, "", err
		}
	}
	return r, id, nil
}

// openObject opens the object key for reading when it is of the write id
// (of any write, when id is ""), and returns the write id it carries (""
// when it carries none). The file's Close says ErrConcurrentWrite when
// the object changed while it was read: what was read is then not the
// object that was checked.
func (d *Dest) openObject(ctx context.Context, key, id string) (*RunFile, string, error) {
	a, err := d.bucket.Attributes(ctx, key)
	if isNotFound(err) {
		return nil, "", ErrNoReport
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s/%s: %w", d.base, key, err)
	}
	got := a.Metadata[attemptKey]
	if id != "" && got != id {
		return nil, "", fmt.Errorf("%s/%s is of another write than %s: %w", d.base, key, manifest, ErrConcurrentWrite)
	}
	f, err := d.streamObject(ctx, key, a)
	if isNotFound(err) {
		return nil, "", ErrNoReport
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s/%s: %w", d.base, key, err)
	}
	return f, got, nil
}

// streamObject opens the object key, whose attributes a were read just
// before, as a RunFile whose Close says ErrConcurrentWrite when the object
// is no longer the one a describes (its ETag changed while it was read).
// Its Size is the length of the answer that carries its bytes (a's when
// the answer gives none): an object rewritten between the two requests,
// or a server whose HEAD and GET disagree, never has more bytes sent
// than were declared. An answer whose ETag is not a's is the object
// rewritten: ErrConcurrentWrite. An error is the store's own.
func (d *Dest) streamObject(ctx context.Context, key string, a *objectAttributes) (*RunFile, error) {
	r, err := d.bucket.NewReader(ctx, key)
	if err != nil {
		return nil, err
	}
	if r.ETag != "" && a.ETag != "" && r.ETag != a.ETag {
		r.Close()
		return nil, fmt.Errorf("%s/%s changed as it was opened: %w", d.base, key, ErrConcurrentWrite)
	}
	size := r.Size
	if size < 0 {
		size = a.Size
	}
	return &RunFile{Reader: r, Size: size, ContentType: contentType(key), close: func() error {
		r.Close()
		if again, err := d.bucket.Attributes(ctx, key); err != nil || again.ETag != a.ETag {
			return fmt.Errorf("%s/%s changed while it was read: %w", d.base, key, ErrConcurrentWrite)
		}
		return nil
	}}, nil
}

// RunFile is one file of a run, open for reading: read it, then Close
// it. Close says whether what was read is the file that was checked: an
// object replaced while it was read is an error (ErrConcurrentWrite),
// and what was read must then be thrown away.
type RunFile struct {
	io.Reader
	Size        int64  // its length in bytes
	ContentType string // its media type, as the destination serves it
	close       func() error
}

// Close releases the file, and says whether it changed while it was read.
func (f *RunFile) Close() error { return f.close() }

// localFile is the open local file f as a RunFile.
func localFile(f *os.File) (*RunFile, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &RunFile{Reader: f, Size: fi.Size(), ContentType: contentType(f.Name()), close: f.Close}, nil
}

// OpenRunFile opens the file name of the run runKey for reading, when
// name is one of the Files clickrecon writes and the folder holds a whole
// report of clickrecon's for that run (as Runs lists it, not Partial).
// Anything else is ErrNoReport: another tool's file or folder, a folder
// being written, a name that is not a plain file name. It only reads,
// and holds no more than a buffer of the file at a time: the caller
// copies it out and closes it.
func (d *Dest) OpenRunFile(ctx context.Context, runKey, name string) (*RunFile, error) {
	if !isRunKey(runKey) || !slices.Contains(report.Files, name) {
		return nil, ErrNoReport
	}
	if d.bucket == nil {
		m, err := d.openLocal(runKey, manifest)
		if err != nil {
			return nil, noReport(err)
		}
		if _, err := readHead(m, runKey); err != nil {
			m.Close()
			return nil, err
		}
		if name == manifest {
			if _, err := m.Seek(0, io.SeekStart); err != nil {
				m.Close()
				return nil, err
			}
			return localFile(m)
		}
		m.Close()
		f, err := d.openLocal(runKey, name)
		if err != nil {
			return nil, noReport(err)
		}
		return localFile(f)
	}
	_, id, err := d.objectReport(ctx, runKey)
	if err != nil {
		return nil, noReport(err)
	}
	f, _, err := d.openObject(ctx, runKey+"/"+name, id)
	if err != nil {
		return nil, noReport(err)
	}
	return f, nil
}

// noReport turns a missing file or a folder caught mid-write into
// ErrNoReport, and leaves any other error (the store did not answer) as
// it is.
func noReport(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrConcurrentWrite) {
		// Both stay: a reader that may read it again looks for
		// ErrConcurrentWrite.
		return fmt.Errorf("%w: %w", ErrNoReport, err)
	}
	return err
}

// IsDir reports whether a local destination's folder exists; an object
// store is taken to exist (a listing says otherwise).
func (d *Dest) IsDir() (bool, error) {
	if d.bucket != nil {
		return true, nil
	}
	fi, err := os.Stat(d.dir)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

// Base is the destination, for a message: a folder, or
// scheme://bucket/prefix without its query.
func (d *Dest) Base() string {
	if d.bucket == nil {
		return d.dir
	}
	return d.base
}
