package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Run is one run folder of a destination, as an index of its runs shows
// it.
type Run struct {
	Key string
	// Partial is a folder that holds clickrecon's files but no whole
	// report: a write under way, or one that stopped. Report is then
	// empty and none of its files is served.
	Partial  bool
	Report   Report
	Modified time.Time // when the folder (or its newest object) last changed
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
// clickrecon's that has no such report.json yet. Folders and objects of
// other tools are left out. It only reads.
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
// or, for a partial folder, when it last changed.
func (r Run) when() time.Time {
	if r.Partial {
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
		}
	}
	// A finished folder may have been listed after its temporary one.
	for key, r := range byKey {
		if !r.Partial {
			continue
		}
		if rep, err := d.localReport(key); err == nil {
			byKey[key] = Run{Key: key, Report: rep, Modified: r.Modified}
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
		if slices.Contains(Files, e.Name()) {
			return true
		}
	}
	return false
}

// localReport reads the report.json of the local run folder runKey, and
// returns it when clickrecon wrote it for that run. A folder without one
// is fs.ErrNotExist; a folder or file that is a symbolic link, or a
// report.json of another tool or run, is ErrNoReport.
func (d *Dest) localReport(runKey string) (Report, error) {
	dir := filepath.Join(d.dir, runKey)
	if fi, err := os.Lstat(dir); err != nil {
		return Report{}, err
	} else if !fi.IsDir() {
		return Report{}, ErrNoReport
	}
	b, err := d.readLocal(runKey, manifest)
	if err != nil {
		return Report{}, err
	}
	return ownReport(b, runKey)
}

// readLocal reads the file name of the run folder runKey: a regular file,
// not a symbolic link, inside the destination's folder.
func (d *Dest) readLocal(runKey, name string) ([]byte, error) {
	dir := filepath.Join(d.dir, runKey)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return nil, ErrNoReport
	}
	p := filepath.Join(dir, name)
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxReportJSON {
		return nil, ErrNoReport
	}
	// The root keeps the open inside the folder even if a name is swapped
	// for a link after the check above.
	root, err := os.OpenRoot(d.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(runKey + "/" + name)
	if err != nil {
		return nil, ErrNoReport
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxReportJSON))
}

// ownReport decodes b, a run folder runKey's report.json, when
// clickrecon wrote it for that run.
func ownReport(b []byte, runKey string) (Report, error) {
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return Report{}, errNotOurs
	}
	if r.Tool != Tool || r.SchemaVersion < 1 || r.SchemaVersion > SchemaVersion || r.RunKey != runKey {
		return Report{}, errNotOurs
	}
	return r, nil
}

// objectRuns lists an object store's runs: each "folder" under the
// prefix named as a run key. One that holds clickrecon's objects but no
// whole report.json is Partial.
func (d *Dest) objectRuns(ctx context.Context) ([]Run, error) {
	var runs []Run
	it := d.bucket.List(&listOptions{Delimiter: "/"})
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
		r, err := d.objectReport(ctx, key)
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
	for name := range objs {
		a, err := d.bucket.Attributes(ctx, runKey+"/"+name)
		if err != nil {
			continue
		}
		if a.ModTime.After(newest) {
			newest = a.ModTime
		}
	}
	return newest, true, nil
}

// objectReport reads the report.json of the run folder runKey in an
// object store, when it is clickrecon's for that run and its folder is
// whole (every other file of clickrecon's there is of the same write).
// A folder without one is ErrNoReport.
func (d *Dest) objectReport(ctx context.Context, runKey string) (Report, error) {
	b, _, err := d.readObject(ctx, runKey, manifest, "")
	if err != nil {
		return Report{}, err
	}
	return ownReport(b, runKey)
}

// readObject reads the object runKey/name, which must not change while
// it is read and, when id is not "", must be of the write id. For
// report.json (id ""), every other file of clickrecon's in the folder
// must be of its write. It returns the object's write id.
func (d *Dest) readObject(ctx context.Context, runKey, name, id string) ([]byte, string, error) {
	key := runKey + "/" + name
	a, err := d.bucket.Attributes(ctx, key)
	if isNotFound(err) {
		return nil, "", ErrNoReport
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s/%s: %w", d.base, key, err)
	}
	if a.Size > maxReportJSON {
		return nil, "", ErrNoReport
	}
	b, err := d.bucket.ReadAll(ctx, key)
	if isNotFound(err) {
		return nil, "", ErrNoReport
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s/%s: %w", d.base, key, err)
	}
	if again, err := d.bucket.Attributes(ctx, key); err != nil || again.ETag != a.ETag {
		return nil, "", fmt.Errorf("%s/%s changed while it was read: %w", d.base, key, ErrConcurrentWrite)
	}
	got, marked := a.Metadata[attemptKey]
	if id != "" && got != id {
		return nil, "", fmt.Errorf("%s/%s is of another write than %s: %w", d.base, key, manifest, ErrConcurrentWrite)
	}
	if name == manifest && marked {
		if err := d.checkWhole(ctx, runKey+"/", got); err != nil {
			return nil, "", err
		}
	}
	return b, got, nil
}

// ReadRunFile returns the file name of the run runKey, and its content
// type, when name is one of the Files clickrecon writes and the folder
// holds a whole report of clickrecon's for that run (as Runs lists it,
// not Partial). Anything else is ErrNoReport: another tool's file or
// folder, a folder being written, a name that is not a plain file name.
// It only reads.
func (d *Dest) ReadRunFile(ctx context.Context, runKey, name string) ([]byte, string, error) {
	if !isRunKey(runKey) || !slices.Contains(Files, name) {
		return nil, "", ErrNoReport
	}
	if d.bucket == nil {
		if _, err := d.localReport(runKey); err != nil {
			return nil, "", noReport(err)
		}
		b, err := d.readLocal(runKey, name)
		if err != nil {
			return nil, "", noReport(err)
		}
		if name == manifest {
			if _, err := ownReport(b, runKey); err != nil {
				return nil, "", err // replaced since it was checked
			}
		}
		return b, contentType(name), nil
	}
	m, id, err := d.readObject(ctx, runKey, manifest, "")
	if err != nil {
		return nil, "", noReport(err)
	}
	if _, err := ownReport(m, runKey); err != nil {
		return nil, "", err
	}
	if name == manifest {
		return m, contentType(name), nil
	}
	b, _, err := d.readObject(ctx, runKey, name, id)
	if err != nil {
		return nil, "", noReport(err)
	}
	return b, contentType(name), nil
}

// noReport turns a missing file or a folder caught mid-write into
// ErrNoReport, and leaves any other error (the store did not answer) as
// it is.
func noReport(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrConcurrentWrite) {
		return fmt.Errorf("%w: %v", ErrNoReport, err)
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
