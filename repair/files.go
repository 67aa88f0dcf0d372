package repair

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/internal/dsn"
	"github.com/clickrecon/clickrecon/internal/durable"
	"github.com/clickrecon/clickrecon/reconcile"
)

// WritePlan writes repair.csv, surplus.csv and repair.sql (in the SQL of
// the store's dialect d) into dir, each synced to disk: what a repair is
// about to insert is recorded before anything is.
func WritePlan(dir string, plans []DayPlan, d dsn.Dialect) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"repair.csv", func(w io.Writer) error { return WriteCSV(w, plans) }},
		{"surplus.csv", func(w io.Writer) error { return WriteSurplusCSV(w, plans) }},
		{"repair.sql", func(w io.Writer) error { return WriteSQL(w, plans, d) }},
	}
	for _, f := range files {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if err := durable.WriteFile(filepath.Join(dir, f.name), b.Bytes(), os.O_TRUNC, 0o640); err != nil {
			return err
		}
	}
	return nil
}

// FileJournal is a Journal that appends a synced line to a file (apply.log)
// before each day is written and after it ends: after a crash, a day with
// an "intend" line and no "done" line was being written, and its
// transaction either committed whole or not at all; a second repair
// re-plans it from the store.
type FileJournal struct {
	Path string
	Now  func() time.Time
}

// Intend records that day's clicks are about to be inserted.
func (j FileJournal) Intend(day reconcile.Date, clicks []Click) error {
	return j.append(fmt.Sprintf("intend %s insert %d clicks", day, len(clicks)))
}

// Done records how a day's repair ended.
func (j FileJournal) Done(r DayResult) error {
	outcome := fmt.Sprintf("committed %d clicks", r.Inserted)
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
	return durable.WriteFile(j.Path, []byte(now().UTC().Format(time.RFC3339)+" "+line+"\n"), os.O_APPEND, 0o640)
}
