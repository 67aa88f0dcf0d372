package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/clickrecon/clickrecon/internal/durable"
	"github.com/clickrecon/clickrecon/report"
)

// replaceFolder writes files into a new folder beside dir/name, syncs them
// to disk, and puts the new folder in place of dir/name, whose previous
// content is then removed. A failure before the swap leaves dir/name as it
// was.
func replaceFolder(dir, name string, files []report.File) (err error) {
	final := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create report folder: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, "."+name+newSuffix)
	if err != nil {
		return fmt.Errorf("write report %s: %w", final, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	// The files are written and synced at once: the file system then
	// commits them in one or a few journal flushes, where one after the
	// other each waits for a flush of its own (8 files: 1.3 ms against
	// 2.5-3.5 ms on ext4 here).
	var g errgroup.Group
	for _, f := range files {
		g.Go(func() error {
			if err := durable.WriteFile(filepath.Join(tmp, f.Name), f.Data, os.O_EXCL, 0o644); err != nil {
				return fmt.Errorf("write report %s: %w", filepath.Join(final, f.Name), err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return fmt.Errorf("write report %s: %w", final, err)
	}
	if err := durable.SyncDir(tmp); err != nil {
		return fmt.Errorf("write report %s: %w", final, err)
	}
	old, err := swapIn(tmp, final)
	if err != nil {
		return fmt.Errorf("write report %s: %w", final, err)
	}
	if err := durable.SyncDir(dir); err != nil {
		return fmt.Errorf("write report %s: %w", final, err)
	}
	if old != "" {
		// The new report is in place; a folder left here is removed by
		// the next Prune.
		os.RemoveAll(old)
	}
	return nil
}

// The temporary folders beside a run's folder: .<run key>.new-* while it
// is written, .<run key>.old-* once it has been replaced.
const (
	newSuffix = ".new-"
	oldSuffix = ".old-"
)

// isLeftover reports whether a folder name is exactly one of
// replaceFolder's temporary folders for a run key: "." + run key +
// ".new-" or ".old-" + the digits os.MkdirTemp adds. A name that merely
// contains ".old-" (someone's .photos.old-2019) is not one.
func isLeftover(name string) bool {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok || len(rest) < runKeyLen {
		return false
	}
	key, suffix := rest[:runKeyLen], rest[runKeyLen:]
	digits, ok := strings.CutPrefix(suffix, newSuffix)
	if !ok {
		digits, ok = strings.CutPrefix(suffix, oldSuffix)
	}
	return ok && isRunKey(key) && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// swapRenames puts tmp at final with two renames, for a file system that
// cannot exchange two names at once: final's previous folder, if any, is
// first renamed aside, and its new path returned. Between the renames
// final does not exist for a moment; it is never a mix of two runs.
func swapRenames(tmp, final string) (string, error) {
	if _, err := os.Lstat(final); os.IsNotExist(err) {
		return "", os.Rename(tmp, final)
	}
	old := filepath.Join(filepath.Dir(tmp), strings.Replace(filepath.Base(tmp), newSuffix, oldSuffix, 1))
	if err := os.Rename(final, old); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		if back := os.Rename(old, final); back != nil {
			return "", fmt.Errorf("%w (and the previous report stays at %s: %v)", err, old, back)
		}
		return "", err
	}
	return old, nil
}
