package repair

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/durable"
	"github.com/clickrecon/clickrecon/reconcile"
)

// AttemptsDir is the folder, in a plan's folder, where each repair
// attempt keeps its own plan: attempts/<stamp>/.
const AttemptsDir = "attempts"

// WritePlan writes repair.csv, surplus.csv and repair.sql (in the SQL of
// the store's dialect d), each synced to disk, so that what a repair is
// about to insert is recorded before anything is: first into a folder of
// this attempt's own, dir/attempts/<stamp>/ (the UTC time now, created
// anew, never one an earlier attempt wrote), then into dir itself, where
// they replace the latest plan whole. An attempt's folder is never
// written again: a later repair of the same window, which finds less to
// insert, leaves what this one planned (and, with apply.log, inserted) on
// record. It returns the attempt's folder.
func WritePlan(dir string, now time.Time, plans []DayPlan, d dsn.Dialect) (string, error) {
	attempt, err := newAttemptDir(filepath.Join(dir, AttemptsDir), now)
	if err != nil {
		return "", err
	}
	files, err := renderPlan(plans, d)
	if err != nil {
		return attempt, err
	}
	for _, to := range []string{attempt, dir} {
		if err := writePlanFiles(to, files); err != nil {
			return attempt, err
		}
	}
	return attempt, nil
}

// newAttemptDir creates a new folder under parent named after now, in
// UTC to the second (20261024T031500Z), with -2, -3… when that name is
// taken, and syncs parent so the folder survives a crash.
func newAttemptDir(parent string, now time.Time) (string, error) {
	if err := os.MkdirAll(parent, 0o750); err != nil {
		return "", err
	}
	stamp := now.UTC().Format("20060102T150405Z")
	for n := 1; ; n++ {
		name := stamp
		if n > 1 {
			name = fmt.Sprintf("%s-%d", stamp, n)
		}
		p := filepath.Join(parent, name)
		err := os.Mkdir(p, 0o750)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return p, durable.SyncDir(parent)
	}
}

// planFile is one of a plan's three files, rendered.
type planFile struct {
	name string
	data []byte
}

// renderPlan renders the plan's three files once, for every folder they
// are written to.
func renderPlan(plans []DayPlan, d dsn.Dialect) ([]planFile, error) {
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"repair.csv", func(w io.Writer) error { return WriteCSV(w, plans) }},
		{"surplus.csv", func(w io.Writer) error { return WriteSurplusCSV(w, plans) }},
		{"repair.sql", func(w io.Writer) error { return WriteSQL(w, plans, d) }},
	}
	out := make([]planFile, 0, len(files))
	for _, f := range files {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		out = append(out, planFile{f.name, b.Bytes()})
	}
	return out, nil
}

// writePlanFiles writes the plan's rendered files into dir, each whole:
// each is written and synced under a name of its own first, then renamed
// over the file it replaces. A file left cut short by a killed run is
// replaced, never appended to; a symbolic link named repair.csv (or any
// other of the three) is replaced by the plan, its target left as it was:
// the plan is never written through a link into a file clickrecon did not
// make.
func writePlanFiles(dir string, files []planFile) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	for _, f := range files {
		if err := replaceFile(dir, f); err != nil {
			return err
		}
	}
	return durable.SyncDir(dir)
}

// replaceFile writes f into dir under a temporary name of its own (made
// with O_EXCL, so never a file that was there), then renames it to
// f.name. The file is created 0640 less the umask, as the plan's other
// files are; the temporary file is removed when the rename does not
// happen.
func replaceFile(dir string, f planFile) error {
	for n := 0; ; n++ {
		tmp := filepath.Join(dir, fmt.Sprintf(".%s.%d-%d.tmp", f.name, os.Getpid(), n))
		err := durable.WriteFile(tmp, f.data, os.O_EXCL, 0o640)
		if errors.Is(err, fs.ErrExist) {
			continue // left by a run that was killed: not ours to touch
		}
		if err == nil {
			err = os.Rename(tmp, filepath.Join(dir, f.name))
		}
		if err != nil {
			os.Remove(tmp)
		}
		return err
	}
}

// FileJournal is a Journal that appends a synced line to a file (apply.log)
// before each day is written and after it ends: after a crash, a day with
// an "intend" line and no "done" line was being written, and its
// transaction either committed whole or not at all; a second repair
// re-plans it from the store. Each "intend" line names the attempt whose
// plan holds the day's clicks.
type FileJournal struct {
	Path    string
	Attempt string // the attempt's folder, as WritePlan returned it
	Now     func() time.Time
}

// Intend records that day's clicks are about to be inserted.
func (j FileJournal) Intend(day reconcile.Date, clicks []Click) error {
	line := fmt.Sprintf("intend %s insert %d clicks", day, len(clicks))
	if j.Attempt != "" {
		line += " (plan in " + filepath.ToSlash(filepath.Join(AttemptsDir, filepath.Base(j.Attempt))) + ")"
	}
	return j.append(line)
}

// Done records how a day's repair ended.
func (j FileJournal) Done(r DayResult) error {
	outcome := fmt.Sprintf("committed %d clicks", r.Inserted)
	if r.Sent != r.Inserted {
		outcome = fmt.Sprintf("committed %d clicks: %s", r.Inserted, KeptNote(r.Sent, r.Inserted))
	}
	for _, h := range r.Rejected {
		outcome += fmt.Sprintf("; hour from %s not written (%d clicks): %s", h.From.UTC().Format(tsLayout), h.Clicks, strings.ReplaceAll(h.Err.Error(), "\n", " "))
	}
	if r.Err != nil {
		outcome = "rolled back, nothing written: " + strings.ReplaceAll(r.Err.Error(), "\n", " ")
	}
	return j.append(fmt.Sprintf("done %s %s", r.Day, outcome))
}

func (j FileJournal) append(line string) error {
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	if fi, err := os.Lstat(j.Path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s): clickrecon appends only to a journal of its own; move it away", j.Path, fi.Mode().Type())
	}
	return durable.WriteFile(j.Path, []byte(now().UTC().Format(time.RFC3339)+" "+line+"\n"), os.O_APPEND, 0o640)
}
